// Priority, DefaultTolerationSeconds and the smaller plugins.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  alwaysPullImages,
  defaultIngressClass,
  defaultStorageClass,
  defaultTolerationSeconds,
  denyServiceExternalIPs,
  extendedResourceToleration,
  limitPodHardAntiAffinityTopology,
  persistentVolumeClaimResize,
  priorityPlugin,
  runtimeClassPlugin,
  storageObjectInUseProtection,
  taintNodesByCondition,
} from '../../src/apiserver/admission/pods.js';
import { SYSTEM_PRIORITY_CLASSES } from '../../src/schema/defaults/admission.js';
import { MemoryCluster, attrs, pod, rejection } from './fake.js';

function withClasses(...extra: any[]) {
  const c = new MemoryCluster();
  c.namespace('apps');
  for (const pc of [...SYSTEM_PRIORITY_CLASSES, ...extra]) c.add('scheduling.k8s.io', 'priorityclasses', structuredClone(pc));
  return c;
}

test('Priority: a named class gives priority and preemption policy; the system classes resolve', async () => {
  const c = withClasses({ metadata: { name: 'high' }, value: 1000, preemptionPolicy: 'Never' });
  const p = priorityPlugin(c);
  const obj = pod('web', 'apps', { priorityClassName: 'high' });
  await p.mutate!(attrs('pods', 'CREATE', { object: obj }));
  assert.equal(obj.spec.priority, 1000);
  assert.equal(obj.spec.preemptionPolicy, 'Never');
  const sys = pod('dns', 'apps', { priorityClassName: 'system-cluster-critical' });
  await p.mutate!(attrs('pods', 'CREATE', { object: sys }));
  assert.equal(sys.spec.priority, 2000000000);
  assert.equal(sys.spec.preemptionPolicy, 'PreemptLowerPriority');
});

test('Priority: no class: the global default (its name too), else 0', async () => {
  const none = pod('a', 'apps');
  await priorityPlugin(withClasses()).mutate!(attrs('pods', 'CREATE', { object: none }));
  assert.equal(none.spec.priority, 0);
  assert.equal(none.spec.preemptionPolicy, 'PreemptLowerPriority');
  assert.equal(none.spec.priorityClassName, undefined);
  const def = pod('b', 'apps');
  await priorityPlugin(withClasses({ metadata: { name: 'normal' }, value: 10, globalDefault: true })).mutate!(attrs('pods', 'CREATE', { object: def }));
  assert.equal(def.spec.priority, 10);
  assert.equal(def.spec.priorityClassName, 'normal');
});

test('Priority: unknown classes and conflicting values are refused', async () => {
  const p = priorityPlugin(withClasses({ metadata: { name: 'high' }, value: 1000 }));
  let err = await rejection(() => p.mutate!(attrs('pods', 'CREATE', { object: pod('web', 'apps', { priorityClassName: 'nope' }) })));
  assert.equal(err.code, 403);
  assert.equal(err.message, 'pods "web" is forbidden: no PriorityClass with name nope was found');
  err = await rejection(() => p.mutate!(attrs('pods', 'CREATE', { object: pod('web', 'apps', { priorityClassName: 'high', priority: 5 }) })));
  assert.equal(err.message, 'pods "web" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name');
});

test('Priority: updates keep the old priority; only one global default class', async () => {
  const c = withClasses({ metadata: { name: 'normal' }, value: 10, globalDefault: true });
  const p = priorityPlugin(c);
  const next = pod('web', 'apps');
  await p.mutate!(attrs('pods', 'UPDATE', { object: next, oldObject: pod('web', 'apps', { priority: 7, preemptionPolicy: 'Never' }) }));
  assert.equal(next.spec.priority, 7);
  const err = await rejection(() => p.validate!(attrs('priorityclasses', 'CREATE', { object: { metadata: { name: 'other' }, value: 5, globalDefault: true } })));
  assert.equal(err.message, 'priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass normal is already marked as default. Only one default can exist');
  await p.validate!(attrs('priorityclasses', 'UPDATE', { object: { metadata: { name: 'normal' }, value: 11, globalDefault: true } }));
});

test('DefaultTolerationSeconds: the not-ready and unreachable tolerations, unless tolerated already', async () => {
  const p = defaultTolerationSeconds(300, 120);
  const obj = pod('web', 'apps');
  await p.mutate!(attrs('pods', 'CREATE', { object: obj }));
  assert.deepEqual(obj.spec.tolerations, [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120 },
  ]);
  const all = pod('all', 'apps', { tolerations: [{ operator: 'Exists' }] });
  await p.mutate!(attrs('pods', 'CREATE', { object: all }));
  assert.deepEqual(all.spec.tolerations, [{ operator: 'Exists' }]);
});

test('AlwaysPullImages: sets and requires imagePullPolicy Always on new images', async () => {
  const p = alwaysPullImages();
  const obj = pod('web', 'apps', { containers: [{ name: 'app', image: 'nginx', imagePullPolicy: 'IfNotPresent' }] });
  await p.mutate!(attrs('pods', 'CREATE', { object: obj }));
  assert.equal(obj.spec.containers[0].imagePullPolicy, 'Always');
  const err = await rejection(() => p.validate!(attrs('pods', 'CREATE', { object: pod('web', 'apps', { containers: [{ name: 'app', image: 'nginx', imagePullPolicy: 'Never' }] }) })));
  assert.equal(err.message, 'pods "web" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always"');
});

test('LimitPodHardAntiAffinityTopology, DenyServiceExternalIPs, TaintNodesByCondition', async () => {
  const anti = (key: string) => pod('web', 'apps', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: key, labelSelector: {} }] } } });
  const err = await rejection(() => limitPodHardAntiAffinityTopology().validate!(attrs('pods', 'CREATE', { object: anti('topology.kubernetes.io/zone') })));
  assert.equal(err.message, 'pods "web" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed');
  await limitPodHardAntiAffinityTopology().validate!(attrs('pods', 'CREATE', { object: anti('kubernetes.io/hostname') }));

  const svc = (ips?: string[]) => ({ metadata: { name: 'web', namespace: 'apps' }, spec: { externalIPs: ips } });
  const err2 = await rejection(() => denyServiceExternalIPs().validate!(attrs('services', 'CREATE', { object: svc(['1.2.3.4']) })));
  assert.equal(err2.message, 'services "web" is forbidden: spec.externalIPs: Forbidden: use of external IPs is denied by admission control');
  await denyServiceExternalIPs().validate!(attrs('services', 'UPDATE', { object: svc(['1.2.3.4']), oldObject: svc(['1.2.3.4', '5.6.7.8']) }));

  const node = { metadata: { name: 'n1' }, spec: {} as any };
  await taintNodesByCondition().mutate!(attrs('nodes', 'CREATE', { object: node }));
  assert.deepEqual(node.spec.taints, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
});

test('ExtendedResourceToleration and RuntimeClass', async () => {
  const gpu = pod('ml', 'apps', { containers: [{ name: 'app', image: 'x', resources: { limits: { 'nvidia.com/gpu': '1' } } }] });
  await extendedResourceToleration().mutate!(attrs('pods', 'CREATE', { object: gpu }));
  assert.deepEqual(gpu.spec.tolerations, [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);

  const c = new MemoryCluster();
  c.add('node.k8s.io', 'runtimeclasses', { metadata: { name: 'kata' }, handler: 'kata', overhead: { podFixed: { cpu: '250m' } }, scheduling: { nodeSelector: { sandbox: 'true' } } });
  const p = runtimeClassPlugin(c);
  const sandboxed = pod('s', 'apps', { runtimeClassName: 'kata' });
  const a = attrs('pods', 'CREATE', { object: sandboxed });
  await p.mutate!(a);
  await p.validate!(a);
  assert.deepEqual(sandboxed.spec.overhead, { cpu: '250m' });
  assert.deepEqual(sandboxed.spec.nodeSelector, { sandbox: 'true' });
  const err = await rejection(() => p.mutate!(attrs('pods', 'CREATE', { object: pod('s', 'apps', { runtimeClassName: 'gvisor' }) })));
  assert.equal(err.message, 'pods "s" is forbidden: pod rejected: RuntimeClass "gvisor" not found');
});

test('DefaultStorageClass, DefaultIngressClass, StorageObjectInUseProtection, PersistentVolumeClaimResize', async () => {
  const c = new MemoryCluster();
  c.add('storage.k8s.io', 'storageclasses', { metadata: { name: 'fast', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, allowVolumeExpansion: true });
  c.add('storage.k8s.io', 'storageclasses', { metadata: { name: 'slow' } });
  c.add('networking.k8s.io', 'ingressclasses', { metadata: { name: 'nginx', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } } });
  const claim = { metadata: { name: 'data', namespace: 'apps' }, spec: { resources: { requests: { storage: '1Gi' } } } as any };
  const a = attrs('persistentvolumeclaims', 'CREATE', { object: claim });
  await defaultStorageClass(c).mutate!(a);
  await storageObjectInUseProtection().mutate!(a);
  assert.equal(claim.spec.storageClassName, 'fast');
  assert.deepEqual((claim.metadata as any).finalizers, ['kubernetes.io/pvc-protection']);
  const ing = { metadata: { name: 'web', namespace: 'apps' }, spec: {} as any };
  await defaultIngressClass(c).mutate!(attrs('ingresses', 'CREATE', { object: ing }));
  assert.equal(ing.spec.ingressClassName, 'nginx');

  const resize = persistentVolumeClaimResize(c);
  const sized = (size: string, cls: string, phase = 'Bound') => ({ metadata: { name: 'data', namespace: 'apps', resourceVersion: '1' }, spec: { storageClassName: cls, resources: { requests: { storage: size } } }, status: { phase } });
  await resize.validate!(attrs('persistentvolumeclaims', 'UPDATE', { object: sized('2Gi', 'fast'), oldObject: sized('1Gi', 'fast') }));
  const err = await rejection(() => resize.validate!(attrs('persistentvolumeclaims', 'UPDATE', { object: sized('2Gi', 'slow'), oldObject: sized('1Gi', 'slow') })));
  assert.equal(err.message, 'persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
});
