// The chain: kube-apiserver's plugin names, order, defaults and flag checks; the phases; a pod
// through the default chain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ADMISSION_PLUGIN_ORDER,
  DEFAULT_ENABLED_ADMISSION_PLUGINS,
  REGISTERED_ADMISSION_PLUGINS,
  admissionFlagHelp,
  buildAdmissionChain,
  enabledAdmissionPlugins,
  validateAdmissionPluginFlags,
} from '../../src/apiserver/admission/chain.js';
import { admissionAttributes, admissionFlags } from '../../src/apiserver/admission/wiring.js';
import { BUILTIN_KINDS } from '../../src/schema/kinds.js';
import { SYSTEM_PRIORITY_CLASSES } from '../../src/schema/defaults/admission.js';
import { MemoryCluster, ADMIN, attrs, pod, rejection } from './fake.js';

test('the default plugins are kube-apiserver 1.33\'s, in its order', () => {
  assert.deepEqual(DEFAULT_ENABLED_ADMISSION_PLUGINS, [
    'NamespaceLifecycle',
    'LimitRanger',
    'ServiceAccount',
    'TaintNodesByCondition',
    'PodSecurity',
    'Priority',
    'DefaultTolerationSeconds',
    'DefaultStorageClass',
    'StorageObjectInUseProtection',
    'PersistentVolumeClaimResize',
    'RuntimeClass',
    'CertificateApproval',
    'CertificateSigning',
    'ClusterTrustBundleAttest',
    'CertificateSubjectRestriction',
    'DefaultIngressClass',
    'PodTopologyLabels',
    'MutatingAdmissionPolicy',
    'MutatingAdmissionWebhook',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionWebhook',
    'ResourceQuota',
  ]);
  assert.equal(ADMISSION_PLUGIN_ORDER.length, 36);
  assert.equal(REGISTERED_ADMISSION_PLUGINS[0], 'AlwaysAdmit');
  assert.equal(REGISTERED_ADMISSION_PLUGINS.at(-1), 'ValidatingAdmissionWebhook');
});

test('--enable/--disable-admission-plugins: order is fixed, not the flags\'', () => {
  const on = enabledAdmissionPlugins(['AlwaysPullImages', 'NodeRestriction', 'NamespaceExists'], ['ResourceQuota', 'PodSecurity']);
  assert.deepEqual(on.slice(0, 7), ['NamespaceLifecycle', 'NamespaceExists', 'LimitRanger', 'ServiceAccount', 'NodeRestriction', 'TaintNodesByCondition', 'AlwaysPullImages']);
  assert.ok(!on.includes('ResourceQuota') && !on.includes('PodSecurity'));
  assert.equal(on.at(-1), 'ValidatingAdmissionWebhook');
});

test('flag checks are worded as kube-apiserver words them', () => {
  assert.deepEqual(validateAdmissionPluginFlags(['Nope', 'LimitRanger'], ['LimitRanger', 'Nah', 'Priority']), [
    'enable-admission-plugins plugin "Nope" is unknown',
    'disable-admission-plugins plugin "Nah" is unknown',
    '[LimitRanger] in enable-admission-plugins and disable-admission-plugins overlapped',
  ]);
  assert.throws(() => buildAdmissionChain({ enable: ['Nope'], disable: [], reader: new MemoryCluster(), writer: new MemoryCluster() }), /enable-admission-plugins plugin "Nope" is unknown/);
  assert.throws(() => buildAdmissionChain({ enable: ['EventRateLimit'], disable: [], reader: new MemoryCluster(), writer: new MemoryCluster() }), /is not supported by Keelson/);
});

test('--help texts', () => {
  const h = admissionFlagHelp();
  assert.match(h.enable, /^admission plugins that should be enabled in addition to default enabled ones \(NamespaceLifecycle, LimitRanger, ServiceAccount, TaintNodesByCondition, PodSecurity, /);
  assert.match(h.enable, /Comma-delimited list of admission plugins: AlwaysAdmit, AlwaysDeny, AlwaysPullImages, CertificateApproval, /);
  assert.match(h.disable, /^admission plugins that should be disabled although they are in the default enabled plugins list \(/);
  assert.match(h.disable, /The order of plugins in this flag does not matter\.$/);
  assert.deepEqual(
    admissionFlags().map((f) => [f.name, f.type, f.default]),
    [
      ['enable-admission-plugins', 'strings', []],
      ['disable-admission-plugins', 'strings', []],
      ['default-not-ready-toleration-seconds', 'int', 300],
      ['default-unreachable-toleration-seconds', 'int', 300],
    ],
  );
});

function cluster() {
  const c = new MemoryCluster();
  c.namespace('apps');
  c.add('', 'serviceaccounts', { metadata: { name: 'default', namespace: 'apps' } });
  for (const pc of SYSTEM_PRIORITY_CLASSES) c.add('scheduling.k8s.io', 'priorityclasses', structuredClone(pc));
  return c;
}

test('a pod through the default chain: every default plugin has its say', async () => {
  const c = cluster();
  c.add('', 'limitranges', { metadata: { name: 'l', namespace: 'apps' }, spec: { limits: [{ type: 'Container', default: { cpu: '200m' }, defaultRequest: { cpu: '100m' } }] } });
  c.add('', 'resourcequotas', { metadata: { name: 'q', namespace: 'apps' }, spec: { hard: { pods: '10' } } });
  const chain = buildAdmissionChain({ enable: [], disable: [], reader: c, writer: c, serviceAccount: { defaultLookupAttempts: 0, suffix: () => 'xyz12' } });
  const obj = pod('web', 'apps');
  obj.metadata.uid = 'u1';
  const a = attrs('pods', 'CREATE', { object: obj });
  await chain.mutate(a);
  await chain.validate(a);
  assert.equal(obj.spec.serviceAccountName, 'default');
  assert.equal(obj.spec.volumes[0].name, 'kube-api-access-xyz12');
  assert.equal(obj.spec.priority, 0);
  assert.equal(obj.spec.tolerations.length, 2);
  assert.deepEqual(obj.spec.containers[0].resources, { limits: { cpu: '200m' }, requests: { cpu: '100m' } });
  assert.equal(a.auditAnnotations!['pod-security.kubernetes.io/enforce-policy'], 'privileged:latest');
  assert.deepEqual(c.get('', 'resourcequotas', 'apps', 'q').status, { hard: { pods: '10' }, used: { pods: '1' } });
  // the first refusal ends the request: a missing namespace stops the chain before ServiceAccount
  const err = await rejection(() => chain.mutate(attrs('pods', 'CREATE', { object: pod('web', 'nope') })));
  assert.equal(err.message, 'namespaces "nope" not found');
});

test('AlwaysDeny refuses everything; AlwaysAdmit nothing', async () => {
  const c = cluster();
  const chain = buildAdmissionChain({ enable: ['AlwaysDeny', 'AlwaysAdmit'], disable: [...DEFAULT_ENABLED_ADMISSION_PLUGINS], reader: c, writer: c });
  assert.deepEqual(chain.plugins, ['AlwaysAdmit', 'AlwaysDeny']);
  const err = await rejection(() => chain.mutate(attrs('configmaps', 'CREATE', { object: { metadata: { name: 'x', namespace: 'apps' } } })));
  assert.equal(err.message, 'configmaps "x" is forbidden: admission control is denying all modifications');
});

test('admissionAttributes: names, namespaces, subresource kinds', () => {
  const kind = (k: string, g = '') => BUILTIN_KINDS.find((x) => x.kind === k && x.group === g)!;
  const user = ADMIN;
  const create = admissionAttributes(kind('Pod'), { operation: 'CREATE', namespace: 'apps', name: '', object: { metadata: { name: 'web' } }, dryRun: false, user });
  assert.equal(create.name, 'web');
  const generated = admissionAttributes(kind('Pod'), { operation: 'CREATE', namespace: 'apps', name: '', object: { metadata: { generateName: 'web-' } }, dryRun: true, user });
  assert.equal(generated.name, '');
  const ns = admissionAttributes(kind('Namespace'), { operation: 'DELETE', namespace: '', name: 'apps', dryRun: false, user });
  assert.equal(ns.namespace, 'apps');
  const scale = admissionAttributes(kind('Deployment', 'apps'), { operation: 'UPDATE', namespace: 'apps', name: 'web', subresource: 'scale', dryRun: false, user });
  assert.deepEqual(scale.kind, { group: 'autoscaling', version: 'v1', kind: 'Scale' });
  assert.deepEqual(scale.resource, { group: 'apps', version: 'v1', resource: 'deployments' });
  const status = admissionAttributes(kind('Pod'), { operation: 'UPDATE', namespace: 'apps', name: 'web', subresource: 'status', dryRun: false, user });
  assert.deepEqual(status.kind, { group: '', version: 'v1', kind: 'Pod' });
});
