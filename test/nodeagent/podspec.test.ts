// The CRI configurations of a pod's sandbox and containers, for the security settings the
// end-to-end tests cannot see take effect on this machine (no SELinux, no AppArmor): what the
// kubelet's generatePodSandboxLinuxConfig and generateContainerConfig hand the runtime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appArmorProfileOf, appArmorRequired, containerConfig, sandboxConfig, type ContainerSettings } from '../../src/nodeagent/podspec.js';

const SETTINGS: ContainerSettings = { cpuCFSQuota: true, cpuCFSQuotaPeriodUs: 100_000, memoryCapacity: 8 << 30, seccompDefault: false };
const DNS = { servers: [], searches: [], options: [] };

function pod(spec: any, annotations: Record<string, string> = {}): any {
  return { metadata: { name: 'p', namespace: 'ns', uid: 'u1', annotations }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } };
}
const config = (p: any, c = p.spec.containers[0]) => containerConfig(p, c, 0, 'sha256:1', [], { command: [], args: [] }, [], 'regular', SETTINGS).linux.securityContext;

test('seLinuxOptions: the pod\'s go to the sandbox; a container gets its own whole, else the pod\'s', () => {
  const podOpts = { user: 'system_u', role: 'system_r', type: 'container_t', level: 's0:c1,c2' };
  const p = pod({ securityContext: { seLinuxOptions: podOpts }, containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'x', securityContext: { seLinuxOptions: { level: 's0:c9' } } }] });
  assert.deepEqual(sandboxConfig(p, 0, DNS).linux.securityContext.selinuxOptions, podOpts);
  assert.deepEqual(config(p, p.spec.containers[0]).selinuxOptions, podOpts);
  assert.deepEqual(config(p, p.spec.containers[1]).selinuxOptions, { user: '', role: '', type: '', level: 's0:c9' });
  const none = pod({});
  assert.equal('selinuxOptions' in sandboxConfig(none, 0, DNS).linux.securityContext, false);
  assert.equal('selinuxOptions' in config(none), false);
});

test('AppArmor: the container\'s profile, else its deprecated annotation, else the pod\'s; with the deprecated string form', () => {
  const p = pod(
    {
      securityContext: { appArmorProfile: { type: 'RuntimeDefault' } },
      containers: [
        { name: 'own', image: 'x', securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'k8s-deny' } } },
        { name: 'annotated', image: 'x' },
        { name: 'plain', image: 'x' },
      ],
    },
    { 'container.apparmor.security.beta.kubernetes.io/annotated': 'unconfined' },
  );
  const [own, annotated, plain] = p.spec.containers.map((c: any) => config(p, c));
  assert.deepEqual([own.apparmor, own.apparmorProfile], [{ profileType: 'Localhost', localhostRef: 'k8s-deny' }, 'localhost/k8s-deny']);
  assert.deepEqual([annotated.apparmor, annotated.apparmorProfile], [{ profileType: 'Unconfined' }, 'unconfined']);
  assert.deepEqual([plain.apparmor, plain.apparmorProfile], [{ profileType: 'RuntimeDefault' }, 'runtime/default']);
  assert.equal('apparmor' in config(pod({})), false);
  assert.deepEqual(appArmorProfileOf(p, { name: 'annotated' }), { type: 'Unconfined' });
});

test('AppArmor is required by any profile but Unconfined, or an annotation but unconfined', () => {
  assert.equal(appArmorRequired(pod({})), false);
  assert.equal(appArmorRequired(pod({ securityContext: { appArmorProfile: { type: 'Unconfined' } } })), false);
  assert.equal(appArmorRequired(pod({ securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } })), true);
  assert.equal(appArmorRequired(pod({ initContainers: [{ name: 'i', image: 'x', securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'x' } } }] })), true);
  assert.equal(appArmorRequired(pod({}, { 'container.apparmor.security.beta.kubernetes.io/c': 'runtime/default' })), true);
  assert.equal(appArmorRequired(pod({}, { 'container.apparmor.security.beta.kubernetes.io/c': 'unconfined' })), false);
});

test('supplemental groups: the fsGroup first, then supplementalGroups; the policy when set', () => {
  const p = pod({ securityContext: { fsGroup: 2000, supplementalGroups: [4000, 5000], supplementalGroupsPolicy: 'Strict' } });
  const sb = sandboxConfig(p, 0, DNS).linux.securityContext;
  assert.deepEqual([sb.supplementalGroups, sb.supplementalGroupsPolicy], [[2000, 4000, 5000], 'Strict']);
  const c = config(p);
  assert.deepEqual([c.supplementalGroups, c.supplementalGroupsPolicy], [[2000, 4000, 5000], 'Strict']);
  assert.equal('supplementalGroupsPolicy' in config(pod({})), false);
});
