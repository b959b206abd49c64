// LimitRanger: container defaults from LimitRanges, min/max/ratio checks of containers and pods,
// and storage bounds of claims.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { limitRanger } from '../../src/apiserver/admission/limitranger.js';
import { MemoryCluster, attrs, pod, rejection } from './fake.js';

function setup(...limits: any[]) {
  const c = new MemoryCluster();
  c.namespace('apps');
  c.add('', 'limitranges', { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'limits', namespace: 'apps' }, spec: { limits } });
  return limitRanger(c);
}

const container = (name: string, resources: any = {}) => ({ name, image: 'nginx', resources });

test('LimitRanger: default requests and limits, and the annotation naming them', async () => {
  const p = setup({ type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m', memory: '128Mi' } });
  const obj = pod('web', 'apps', {
    containers: [container('app'), container('side', { requests: { cpu: '50m' } })],
    initContainers: [container('init')],
  });
  const a = attrs('pods', 'CREATE', { object: obj });
  await p.mutate!(a);
  await p.validate!(a);
  assert.deepEqual(obj.spec.containers[0].resources, { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } });
  assert.deepEqual(obj.spec.containers[1].resources, { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '50m', memory: '128Mi' } });
  assert.equal(
    obj.metadata.annotations['kubernetes.io/limit-ranger'],
    'LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; memory request for container side; cpu, memory limit for container side; cpu, memory request for init container init; cpu, memory limit for init container init',
  );
});

test('LimitRanger: min and max per container, worded as Kubernetes words them', async () => {
  const p = setup({ type: 'Container', min: { cpu: '100m' }, max: { cpu: '1', memory: '1Gi' } });
  const check = async (resources: any) => (await rejection(() => p.validate!(attrs('pods', 'CREATE', { object: pod('web', 'apps', { containers: [container('app', resources)] }) })))).message;
  assert.equal(
    await check({ requests: { cpu: '50m' }, limits: { cpu: '1', memory: '1Gi' } }),
    'pods "web" is forbidden: minimum cpu usage per Container is 100m, but request is 50m',
  );
  assert.equal(await check({ limits: { memory: '1Gi' } }), 'pods "web" is forbidden: [minimum cpu usage per Container is 100m.  No request is specified, maximum cpu usage per Container is 1.  No limit is specified]');
  assert.equal(
    await check({ requests: { cpu: '200m' }, limits: { cpu: '2', memory: '2Gi' } }),
    'pods "web" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, maximum memory usage per Container is 1Gi, but limit is 2Gi]',
  );
  await p.validate!(attrs('pods', 'CREATE', { object: pod('ok', 'apps', { containers: [container('app', { requests: { cpu: '200m' }, limits: { cpu: '1', memory: '512Mi' } })] }) }));
});

test('LimitRanger: maxLimitRequestRatio', async () => {
  const p = setup({ type: 'Container', maxLimitRequestRatio: { cpu: '2' } });
  const err = await rejection(() => p.validate!(attrs('pods', 'CREATE', { object: pod('web', 'apps', { containers: [container('app', { requests: { cpu: '100m' }, limits: { cpu: '300m' } })] }) })));
  assert.equal(err.message, 'pods "web" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000');
  const err2 = await rejection(() => p.validate!(attrs('pods', 'CREATE', { object: pod('web', 'apps', { containers: [container('app', { limits: { cpu: '300m' } })] }) })));
  assert.equal(err2.message, 'pods "web" is forbidden: cpu max limit to request ratio per Container is 2, but no request is specified or request is 0');
});

test('LimitRanger: Pod limits count the whole pod (init containers as their maximum)', async () => {
  const p = setup({ type: 'Pod', max: { memory: '1Gi' } });
  const obj = pod('web', 'apps', {
    containers: [container('a', { requests: { memory: '400Mi' }, limits: { memory: '600Mi' } }), container('b', { requests: { memory: '400Mi' }, limits: { memory: '600Mi' } })],
    initContainers: [container('init', { requests: { memory: '100Mi' }, limits: { memory: '100Mi' } })],
  });
  const err = await rejection(() => p.validate!(attrs('pods', 'CREATE', { object: obj })));
  assert.equal(err.message, 'pods "web" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1200Mi');
});

test('LimitRanger: claims get min and max storage; pod updates and subresources are not checked', async () => {
  const p = setup({ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } });
  const claim = (size: string) => ({ metadata: { name: 'data', namespace: 'apps' }, spec: { resources: { requests: { storage: size } } } });
  let err = await rejection(() => p.validate!(attrs('persistentvolumeclaims', 'CREATE', { object: claim('20Gi') })));
  assert.equal(err.message, 'persistentvolumeclaims "data" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi');
  err = await rejection(() => p.validate!(attrs('persistentvolumeclaims', 'UPDATE', { object: claim('500Mi'), oldObject: claim('2Gi') })));
  assert.equal(err.message, 'persistentvolumeclaims "data" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi');
  await p.validate!(attrs('persistentvolumeclaims', 'CREATE', { object: claim('5Gi') }));

  const q = setup({ type: 'Container', max: { cpu: '1' } });
  const big = pod('web', 'apps', { containers: [container('app', { limits: { cpu: '4' } })] });
  await q.validate!(attrs('pods', 'UPDATE', { object: big, oldObject: big }));
  await q.validate!(attrs('pods', 'UPDATE', { object: big, oldObject: big, subresource: 'status' }));
  // an object being deleted is not checked
  const going = pod('web', 'apps', { containers: [container('app', { limits: { cpu: '4' } })] }, { deletionTimestamp: '2025-01-01T00:00:00Z' });
  await q.validate!(attrs('persistentvolumeclaims', 'UPDATE', { object: claim('1Gi'), oldObject: { metadata: going.metadata } }));
});
