// The defaults that need server state: the registry strategies' (Job selector, DaemonSet template
// generation, Service IP families) and the default admission plugins' pod defaults (service
// account token volume, priority, tolerations). Expectations from Kubernetes 1.33's strategies and
// admission plugins as we read them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalize } from '../../src/codec/json.js';
import {
  addDefaultTolerations,
  addStorageProtectionFinalizer,
  applyDefaultIngressClass,
  applyDefaultStorageClass,
  applyLimitRangeDefaults,
  setCSRRequester,
  admitPodPriority,
  admitPodServiceAccount,
  applyDefaults,
  initServiceIPFamilies,
  normalizeServiceClusterIPs,
  randomNameSuffix,
  setDaemonSetTemplateGeneration,
  SYSTEM_PRIORITY_CLASSES,
  type PriorityClassInfo,
} from '../../src/schema/defaults/index.js';

const SYSTEM: PriorityClassInfo[] = SYSTEM_PRIORITY_CLASSES.map((pc) => ({ name: pc.metadata.name, value: pc.value, preemptionPolicy: pc.preemptionPolicy }));

function classes(extra: PriorityClassInfo[] = []) {
  const all = [...SYSTEM, ...extra];
  return { getClass: (n: string) => all.find((c) => c.name === n), listClasses: () => all };
}

function decodedPod(input: unknown): any {
  const n = normalize('io.k8s.api.core.v1.Pod', input);
  applyDefaults('', 'v1', 'Pod', n.obj);
  return n.obj;
}

test('kubectl run nginx --image=nginx: the pod as a 1.33 server returns it (spec)', () => {
  const pod = decodedPod({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'nginx', namespace: 'default', labels: { run: 'nginx' } },
    spec: { containers: [{ name: 'nginx', image: 'nginx', resources: {} }], restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' },
    status: {},
  });
  // the admission chain, in kube-apiserver's plugin order
  assert.equal(admitPodServiceAccount(pod, { serviceAccount: { metadata: { name: 'default' } }, suffix: () => 'x7k2q' }), undefined);
  assert.equal(admitPodPriority(pod, { operation: 'CREATE', ...classes() }), undefined);
  addDefaultTolerations(pod);
  const mount = '/var/run/secrets/kubernetes.io/serviceaccount';
  const want = {
    volumes: [
      {
        name: 'kube-api-access-x7k2q',
        projected: {
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
            { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
          ],
          defaultMode: 420,
        },
      },
    ],
    containers: [
      {
        name: 'nginx',
        image: 'nginx',
        resources: {},
        volumeMounts: [{ name: 'kube-api-access-x7k2q', readOnly: true, mountPath: mount }],
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        imagePullPolicy: 'Always',
      },
    ],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    serviceAccountName: 'default',
    serviceAccount: 'default',
    securityContext: {},
    schedulerName: 'default-scheduler',
    tolerations: [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ],
    priority: 0,
    enableServiceLinks: true,
    preemptionPolicy: 'PreemptLowerPriority',
  };
  assert.deepEqual(pod.spec, want);
  assert.equal(JSON.stringify(pod.spec), JSON.stringify(want));
});

test('ServiceAccount admission: automount off, own mounts, existing volume, image pull secrets, missing account, mirror pods', () => {
  const sa = { metadata: { name: 'builder' }, automountServiceAccountToken: false, imagePullSecrets: [{ name: 'regcred' }] };
  const off = decodedPod({ metadata: { name: 'p' }, spec: { serviceAccountName: 'builder', containers: [{ name: 'c', image: 'x' }] } });
  assert.equal(admitPodServiceAccount(off, { serviceAccount: sa }), undefined);
  assert.equal(off.spec.volumes, undefined);
  assert.deepEqual(off.spec.imagePullSecrets, [{ name: 'regcred' }]);

  // the pod's own setting wins over the account's
  const on = decodedPod({ metadata: { name: 'p' }, spec: { serviceAccountName: 'builder', automountServiceAccountToken: true, containers: [{ name: 'c', image: 'x' }] } });
  admitPodServiceAccount(on, { serviceAccount: sa, suffix: () => 'abcde' });
  assert.equal(on.spec.volumes[0].name, 'kube-api-access-abcde');

  // a container with something at the token path is left alone; an existing token volume is reused
  const own = decodedPod({
    metadata: { name: 'p' },
    spec: {
      volumes: [{ name: 'kube-api-access-zzzzz', emptyDir: {} }],
      initContainers: [{ name: 'i', image: 'x' }],
      containers: [{ name: 'c', image: 'x', volumeMounts: [{ name: 'mine', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] }],
    },
  });
  admitPodServiceAccount(own, { serviceAccount: { metadata: { name: 'default' } } });
  assert.equal(own.spec.volumes.length, 1);
  assert.deepEqual(own.spec.initContainers[0].volumeMounts, [{ name: 'kube-api-access-zzzzz', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
  assert.equal(own.spec.containers[0].volumeMounts.length, 1);

  const missing = decodedPod({ metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [] } });
  assert.match(admitPodServiceAccount(missing, {}) ?? '', /serviceaccount "default" not found/);

  const mirror = decodedPod({ metadata: { name: 'p', annotations: { 'kubernetes.io/config.mirror': 'x' } }, spec: { containers: [] } });
  assert.equal(admitPodServiceAccount(mirror, {}), undefined);
  assert.equal(mirror.spec.serviceAccountName, undefined);

  assert.match(randomNameSuffix(), /^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
});

test('Priority admission', () => {
  const named = decodedPod({ metadata: { name: 'p' }, spec: { priorityClassName: 'system-node-critical', containers: [] } });
  assert.equal(admitPodPriority(named, { operation: 'CREATE', ...classes() }), undefined);
  assert.equal(named.spec.priority, 2000001000);
  assert.equal(named.spec.preemptionPolicy, 'PreemptLowerPriority');

  const never: PriorityClassInfo = { name: 'batch', value: 100, globalDefault: true, preemptionPolicy: 'Never' };
  const low: PriorityClassInfo = { name: 'low', value: 10, globalDefault: true, preemptionPolicy: 'PreemptLowerPriority' };
  const dflt = decodedPod({ metadata: { name: 'p' }, spec: { containers: [] } });
  assert.equal(admitPodPriority(dflt, { operation: 'CREATE', ...classes([never, low]) }), undefined);
  assert.equal(dflt.spec.priorityClassName, 'low', 'the lowest of several global defaults');
  assert.equal(dflt.spec.priority, 10);

  const unknown = decodedPod({ metadata: { name: 'p' }, spec: { priorityClassName: 'nope', containers: [] } });
  assert.equal(admitPodPriority(unknown, { operation: 'CREATE', ...classes() }), 'no PriorityClass with name nope was found');

  const wrong = decodedPod({ metadata: { name: 'p' }, spec: { priority: 5, containers: [] } });
  assert.match(admitPodPriority(wrong, { operation: 'CREATE', ...classes() }) ?? '', /must not be provided in pod spec; priority admission controller computed 0/);
  const same = decodedPod({ metadata: { name: 'p' }, spec: { priority: 0, containers: [] } });
  assert.equal(admitPodPriority(same, { operation: 'CREATE', ...classes() }), undefined);

  const upd = decodedPod({ metadata: { name: 'p' }, spec: { containers: [] } });
  admitPodPriority(upd, { operation: 'UPDATE', oldPod: { spec: { priority: 7, preemptionPolicy: 'Never' } }, ...classes() });
  assert.equal(upd.spec.priority, 7);
  assert.equal(upd.spec.preemptionPolicy, 'Never');
});

test('DefaultTolerationSeconds admission', () => {
  const wildcard = { spec: { tolerations: [{ operator: 'Exists' }] } };
  addDefaultTolerations(wildcard);
  assert.deepEqual(wildcard.spec.tolerations, [{ operator: 'Exists' }]);
  const one: any = { spec: { tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }] } };
  addDefaultTolerations(one, 300, 120);
  assert.deepEqual(one.spec.tolerations.map((t: any) => [t.key, t.tolerationSeconds]), [
    ['node.kubernetes.io/not-ready', 60],
    ['node.kubernetes.io/unreachable', 120],
  ]);
  const noSchedule: any = { spec: { tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoSchedule' }] } };
  addDefaultTolerations(noSchedule);
  assert.equal(noSchedule.spec.tolerations.length, 3, 'a NoSchedule toleration does not count');
});

test('Service IP families and cluster IPs before allocation', () => {
  const svc = (spec: object) => {
    const n = normalize('io.k8s.api.core.v1.Service', { metadata: { name: 's' }, spec });
    applyDefaults('', 'v1', 'Service', n.obj);
    normalizeServiceClusterIPs(n.obj);
    return n.obj;
  };
  const v4 = { families: ['IPv4' as const] };
  const dual = { families: ['IPv4' as const, 'IPv6' as const] };

  const plain = svc({ selector: { app: 'web' }, ports: [{ port: 80 }] });
  assert.deepEqual(initServiceIPFamilies(plain, v4), []);
  assert.deepEqual(plain.spec, {
    ports: [{ protocol: 'TCP', port: 80, targetPort: 80 }],
    selector: { app: 'web' },
    type: 'ClusterIP',
    sessionAffinity: 'None',
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    internalTrafficPolicy: 'Cluster',
  });

  const headless = svc({ clusterIP: 'None', selector: { app: 'db' }, ports: [{ port: 5432 }] });
  initServiceIPFamilies(headless, v4);
  assert.deepEqual([headless.spec.clusterIPs, headless.spec.ipFamilyPolicy, headless.spec.ipFamilies], [['None'], 'SingleStack', ['IPv4']]);

  const selectorless = svc({ clusterIP: 'None', ports: [{ port: 1 }] });
  initServiceIPFamilies(selectorless, v4);
  assert.deepEqual([selectorless.spec.ipFamilyPolicy, selectorless.spec.ipFamilies], ['RequireDualStack', ['IPv4', 'IPv6']]);

  const prefer = svc({ ipFamilyPolicy: 'PreferDualStack', ports: [{ port: 1 }] });
  initServiceIPFamilies(prefer, dual);
  assert.deepEqual(prefer.spec.ipFamilies, ['IPv4', 'IPv6']);
  const preferSingle = svc({ ipFamilyPolicy: 'PreferDualStack', ports: [{ port: 1 }] });
  initServiceIPFamilies(preferSingle, v4);
  assert.deepEqual(preferSingle.spec.ipFamilies, ['IPv4']);

  const given = svc({ clusterIP: 'fd00::10', ports: [{ port: 1 }] });
  assert.deepEqual(initServiceIPFamilies(given, dual), []);
  assert.deepEqual([given.spec.clusterIPs, given.spec.ipFamilies], [['fd00::10'], ['IPv6']]);
  const printed = (errs: { toString(): string }[]) => errs.map(String);
  assert.deepEqual(printed(initServiceIPFamilies(svc({ clusterIP: 'fd00::10', ports: [{ port: 1 }] }), v4)), ['spec.clusterIPs[0]: Invalid value: []string{"fd00::10"}: IPv6 is not configured on this cluster']);

  assert.deepEqual(printed(initServiceIPFamilies(svc({ ipFamilyPolicy: 'RequireDualStack', ports: [{ port: 1 }] }), v4)), [
    'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
  ]);
  const ext = svc({ type: 'ExternalName', externalName: 'x.example.com' });
  initServiceIPFamilies(ext, v4);
  assert.equal(ext.spec.ipFamilyPolicy, undefined);
  assert.equal(ext.spec.ipFamilies, undefined);

  // an unchanged PreferDualStack service is not upgraded when the cluster becomes dual-stack...
  const old = { spec: { type: 'ClusterIP', ipFamilyPolicy: 'PreferDualStack', clusterIPs: ['10.0.0.5'], ipFamilies: ['IPv4'] } };
  const same = svc({ clusterIP: '10.0.0.5', clusterIPs: ['10.0.0.5'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'PreferDualStack', ports: [{ port: 1 }] });
  initServiceIPFamilies(same, dual, old);
  assert.deepEqual(same.spec.ipFamilies, ['IPv4']);
  // ...but an update without a policy takes the old policy and goes through the whole process
  const upd = svc({ clusterIP: '10.0.0.5', clusterIPs: ['10.0.0.5'], ipFamilies: ['IPv4'], ports: [{ port: 1 }] });
  initServiceIPFamilies(upd, dual, old);
  assert.equal(upd.spec.ipFamilyPolicy, 'PreferDualStack');
  assert.deepEqual(upd.spec.ipFamilies, ['IPv4', 'IPv6']);
  // SingleStack on update drops a secondary family the user left unchanged
  const down = svc({ clusterIPs: ['10.0.0.5', 'fd00::5'], ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'SingleStack', ports: [{ port: 1 }] });
  const oldDual = { spec: { type: 'ClusterIP', ipFamilyPolicy: 'RequireDualStack', clusterIPs: ['10.0.0.5', 'fd00::5'], ipFamilies: ['IPv4', 'IPv6'] } };
  assert.deepEqual(initServiceIPFamilies(down, dual, oldDual), []);
  assert.deepEqual([down.spec.clusterIPs, down.spec.ipFamilies], [['10.0.0.5'], ['IPv4']]);
});

test('DaemonSet template generation annotation', () => {
  const ds: any = { metadata: { name: 'ds', annotations: { a: 'b' } }, spec: { template: { spec: { containers: [{ name: 'c', image: 'x:1' }] } } } };
  setDaemonSetTemplateGeneration(ds);
  assert.deepEqual(ds.metadata.annotations, { a: 'b', 'deprecated.daemonset.template.generation': '1' });
  const same = JSON.parse(JSON.stringify(ds));
  same.spec.minReadySeconds = 5;
  setDaemonSetTemplateGeneration(same, ds);
  assert.equal(same.metadata.annotations['deprecated.daemonset.template.generation'], '1');
  const changed = JSON.parse(JSON.stringify(ds));
  changed.spec.template.spec.containers[0].image = 'x:2';
  setDaemonSetTemplateGeneration(changed, ds);
  assert.equal(changed.metadata.annotations['deprecated.daemonset.template.generation'], '2');
  const bare: any = { metadata: { name: 'd' }, spec: {} };
  setDaemonSetTemplateGeneration(bare);
  assert.deepEqual(Object.keys(bare.metadata), ['name', 'annotations']);
});

test('LimitRanger: container defaults from the namespace LimitRange, and its annotation', () => {
  const lr = normalize('io.k8s.api.core.v1.LimitRange', { metadata: { name: 'lr' }, spec: { limits: [{ type: 'Container', default: { cpu: '500m', memory: '256Mi' } }] } }).obj;
  applyDefaults('', 'v1', 'LimitRange', lr);
  const pod = decodedPod({
    metadata: { name: 'p' },
    spec: { initContainers: [{ name: 'init', image: 'x' }], containers: [{ name: 'nginx', image: 'nginx', resources: { requests: { memory: '64Mi' } } }] },
  });
  applyLimitRangeDefaults(pod, [lr]);
  assert.deepEqual(pod.spec.containers[0].resources, { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '500m', memory: '64Mi' } });
  assert.deepEqual(pod.spec.initContainers[0].resources, { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '500m', memory: '256Mi' } });
  assert.equal(
    pod.metadata.annotations['kubernetes.io/limit-ranger'],
    'LimitRanger plugin set: cpu request for container nginx; cpu, memory limit for container nginx; cpu, memory request for init container init; cpu, memory limit for init container init',
  );
});

test('StorageObjectInUseProtection, DefaultStorageClass, DefaultIngressClass', () => {
  const pvc: any = { metadata: { name: 'c' }, spec: { accessModes: ['ReadWriteOnce'] } };
  addStorageProtectionFinalizer(pvc, 'PersistentVolumeClaim');
  addStorageProtectionFinalizer(pvc, 'PersistentVolumeClaim');
  assert.deepEqual(pvc.metadata.finalizers, ['kubernetes.io/pvc-protection']);
  const pv: any = { metadata: { name: 'v', finalizers: ['x'] }, spec: {} };
  addStorageProtectionFinalizer(pv, 'PersistentVolume');
  assert.deepEqual(pv.metadata.finalizers, ['x', 'kubernetes.io/pv-protection']);

  const classes = [
    { metadata: { name: 'old', creationTimestamp: '2024-01-01T00:00:00Z', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } },
    { metadata: { name: 'new', creationTimestamp: '2025-01-01T00:00:00Z', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } },
    { metadata: { name: 'other', creationTimestamp: '2026-01-01T00:00:00Z' } },
  ];
  applyDefaultStorageClass(pvc, classes);
  assert.equal(pvc.spec.storageClassName, 'new');
  assert.deepEqual(Object.keys(pvc.spec), ['accessModes', 'storageClassName']);
  const explicitEmpty: any = { metadata: { name: 'c' }, spec: { storageClassName: '' } };
  applyDefaultStorageClass(explicitEmpty, classes);
  assert.equal(explicitEmpty.spec.storageClassName, '', 'an explicit "" means no class');
  const beta: any = { metadata: { name: 'c', annotations: { 'volume.beta.kubernetes.io/storage-class': 'x' } }, spec: {} };
  applyDefaultStorageClass(beta, classes);
  assert.equal(beta.spec.storageClassName, undefined);

  const ing: any = { metadata: { name: 'i' }, spec: { rules: [] } };
  applyDefaultIngressClass(ing, [{ metadata: { name: 'nginx', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } } }]);
  assert.deepEqual(ing.spec, { ingressClassName: 'nginx', rules: [] });
  assert.deepEqual(Object.keys(ing.spec), ['ingressClassName', 'rules']);
});

test('CertificateSigningRequest: the requester is the authenticated user', () => {
  const csr: any = {
    metadata: { name: 'c' },
    spec: { request: 'LS0t', signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], username: 'forged' },
    status: { conditions: [{ type: 'Approved', status: 'True' }] },
  };
  setCSRRequester(csr, { name: 'alice', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a'] } });
  assert.deepEqual(csr.spec, {
    request: 'LS0t',
    signerName: 'kubernetes.io/kube-apiserver-client',
    usages: ['client auth'],
    username: 'alice',
    groups: ['devs', 'system:authenticated'],
    extra: { scopes: ['a'] },
  });
  assert.deepEqual(Object.keys(csr.spec), ['request', 'signerName', 'usages', 'username', 'groups', 'extra']);
  assert.deepEqual(csr.status, {});
});
