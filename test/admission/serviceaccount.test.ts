// ServiceAccount: the default account, the projected token volume and its mounts, automounting,
// image pull secrets, missing accounts, mirror pods and mountable secrets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serviceAccountPlugin } from '../../src/apiserver/admission/serviceaccount.js';
import { MemoryCluster, attrs, pod, rejection } from './fake.js';

function setup(sa: any = {}) {
  const c = new MemoryCluster();
  c.namespace('apps');
  c.add('', 'serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: 'apps' }, ...sa });
  const p = serviceAccountPlugin(c, { defaultLookupAttempts: 0, suffix: () => 'abcde' });
  return { c, p };
}

const TOKEN_VOLUME = {
  name: 'kube-api-access-abcde',
  projected: {
    sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
    defaultMode: 420,
  },
};
const MOUNT = { name: 'kube-api-access-abcde', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' };

test('ServiceAccount: the default account, the kube-api-access volume mounted in every container', async () => {
  const { p } = setup();
  const obj = pod('web', 'apps', {
    initContainers: [{ name: 'init', image: 'busybox' }],
    containers: [{ name: 'app', image: 'nginx' }, { name: 'side', image: 'envoy', volumeMounts: [{ name: 'own', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] }],
  });
  const a = attrs('pods', 'CREATE', { object: obj });
  await p.mutate!(a);
  await p.validate!(a);
  assert.equal(obj.spec.serviceAccountName, 'default');
  assert.equal(obj.spec.serviceAccount, 'default');
  assert.deepEqual(obj.spec.volumes, [TOKEN_VOLUME]);
  assert.deepEqual(obj.spec.initContainers[0].volumeMounts, [MOUNT]);
  assert.deepEqual(obj.spec.containers[0].volumeMounts, [MOUNT]);
  // a container with its own mount at the path keeps it
  assert.deepEqual(obj.spec.containers[1].volumeMounts, [{ name: 'own', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
});

test('ServiceAccount: automountServiceAccountToken on the account, overridden by the pod', async () => {
  const { p } = setup({ automountServiceAccountToken: false });
  const off = pod('a', 'apps');
  await p.mutate!(attrs('pods', 'CREATE', { object: off }));
  assert.equal(off.spec.volumes, undefined);
  assert.equal(off.spec.containers[0].volumeMounts, undefined);
  const on = pod('b', 'apps', { automountServiceAccountToken: true });
  await p.mutate!(attrs('pods', 'CREATE', { object: on }));
  assert.deepEqual(on.spec.volumes, [TOKEN_VOLUME]);
  const { p: p2 } = setup();
  const podOff = pod('c', 'apps', { automountServiceAccountToken: false });
  await p2.mutate!(attrs('pods', 'CREATE', { object: podOff }));
  assert.equal(podOff.spec.volumes, undefined);
});

test('ServiceAccount: an existing kube-api-access volume is reused', async () => {
  const { p } = setup();
  const obj = pod('web', 'apps', { volumes: [{ name: 'kube-api-access-zzzzz', projected: { sources: [] } }] });
  await p.mutate!(attrs('pods', 'CREATE', { object: obj }));
  assert.equal(obj.spec.volumes.length, 1);
  assert.deepEqual(obj.spec.containers[0].volumeMounts, [{ ...MOUNT, name: 'kube-api-access-zzzzz' }]);
});

test("ServiceAccount: the account's image pull secrets when the pod has none", async () => {
  const { p } = setup({ imagePullSecrets: [{ name: 'registry' }] });
  const obj = pod('web', 'apps');
  await p.mutate!(attrs('pods', 'CREATE', { object: obj }));
  assert.deepEqual(obj.spec.imagePullSecrets, [{ name: 'registry' }]);
  const own = pod('own', 'apps', { imagePullSecrets: [{ name: 'mine' }] });
  await p.mutate!(attrs('pods', 'CREATE', { object: own }));
  assert.deepEqual(own.spec.imagePullSecrets, [{ name: 'mine' }]);
});

test('ServiceAccount: a missing account is refused with Kubernetes\' message', async () => {
  const { p } = setup();
  let err = await rejection(() => p.mutate!(attrs('pods', 'CREATE', { object: pod('web', 'apps', { serviceAccountName: 'robot' }) })));
  assert.equal(err.code, 403);
  assert.equal(err.message, 'pods "web" is forbidden: error looking up service account apps/robot: serviceaccount "robot" not found');
  const c = new MemoryCluster();
  c.namespace('empty');
  const p2 = serviceAccountPlugin(c, { defaultLookupAttempts: 0 });
  err = await rejection(() => p2.mutate!(attrs('pods', 'CREATE', { object: pod('web', 'empty') })));
  assert.equal(err.message, 'pods "web" is forbidden: error looking up service account empty/default: serviceaccount "default" not found');
});

test('ServiceAccount: the default account is waited for (it is created just after its namespace)', async () => {
  const c = new MemoryCluster();
  c.namespace('new');
  const p = serviceAccountPlugin(c, { defaultLookupAttempts: 10, suffix: () => 'abcde' });
  setTimeout(() => c.add('', 'serviceaccounts', { metadata: { name: 'default', namespace: 'new' } }), 150);
  const obj = pod('web', 'new');
  await p.mutate!(attrs('pods', 'CREATE', { object: obj }));
  assert.equal(obj.spec.serviceAccountName, 'default');
});

test('ServiceAccount: mirror pods are not changed and may reference no account, secret or token', async () => {
  const { p } = setup();
  const mirror = (spec: any = {}) => pod('static', 'apps', spec, { annotations: { 'kubernetes.io/config.mirror': 'hash' } });
  const ok = mirror();
  await p.mutate!(attrs('pods', 'CREATE', { object: ok }));
  assert.equal(ok.spec.serviceAccountName, undefined);
  assert.equal(ok.spec.volumes, undefined);
  let err = await rejection(() => p.mutate!(attrs('pods', 'CREATE', { object: mirror({ serviceAccountName: 'default' }) })));
  assert.equal(err.message, 'pods "static" is forbidden: a mirror pod may not reference service accounts');
  err = await rejection(() => p.mutate!(attrs('pods', 'CREATE', { object: mirror({ volumes: [{ name: 's', secret: { secretName: 'x' } }] }) })));
  assert.equal(err.message, 'pods "static" is forbidden: a mirror pod may not reference secrets');
  err = await rejection(() => p.mutate!(attrs('pods', 'CREATE', { object: mirror({ volumes: [{ name: 't', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }] }) })));
  assert.equal(err.message, 'pods "static" is forbidden: a mirror pod may not use ServiceAccountToken volume projections');
});

test('ServiceAccount: kubernetes.io/enforce-mountable-secrets limits the secrets a pod may use', async () => {
  const { p } = setup({ metadata: { name: 'default', namespace: 'apps', annotations: { 'kubernetes.io/enforce-mountable-secrets': 'true' } }, secrets: [{ name: 'allowed' }] });
  await p.mutate!(attrs('pods', 'CREATE', { object: pod('ok', 'apps', { volumes: [{ name: 's', secret: { secretName: 'allowed' } }] }) }));
  let err = await rejection(() => p.mutate!(attrs('pods', 'CREATE', { object: pod('vol', 'apps', { volumes: [{ name: 's', secret: { secretName: 'other' } }] }) })));
  assert.equal(err.message, 'pods "vol" is forbidden: volume with secret.secretName="other" is not allowed because service account default does not reference that secret');
  err = await rejection(() =>
    p.mutate!(attrs('pods', 'CREATE', { object: pod('env', 'apps', { containers: [{ name: 'app', image: 'x', env: [{ name: 'PW', valueFrom: { secretKeyRef: { name: 'other', key: 'pw' } } }] }] }) })),
  );
  assert.equal(err.message, 'pods "env" is forbidden: container app with envVar PW referencing secret.secretName="other" is not allowed because service account default does not reference that secret');
});

test('ServiceAccount: other resources, subresources and updates are left alone', async () => {
  const { p } = setup();
  const obj = pod('web', 'apps');
  await p.mutate!(attrs('pods', 'UPDATE', { object: obj, oldObject: pod('web', 'apps') }));
  await p.mutate!(attrs('pods', 'UPDATE', { object: obj, subresource: 'status' }));
  assert.equal(obj.spec.serviceAccountName, undefined);
  await p.mutate!(attrs('configmaps', 'CREATE', { object: { metadata: { name: 'x', namespace: 'apps' } } }));
});
