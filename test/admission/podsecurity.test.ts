// PodSecurity: the namespace labels, the baseline and restricted checks with Kubernetes'
// messages, enforce (refuse), warn (warnings), audit (annotations), versions, workloads and
// namespace label changes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podSecurity, policyToEvaluate, evaluatePod, forbiddenDetail, LATEST } from '../../src/apiserver/admission/podsecurity.js';
import { MemoryCluster, attrs, pod, rejection } from './fake.js';

function setup(labels: Record<string, string>) {
  const c = new MemoryCluster();
  c.namespace('apps', labels);
  return { c, p: podSecurity(c) };
}

const RESTRICTED_OK = {
  securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
  containers: [{ name: 'app', image: 'nginx', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
};

test('PodSecurity: restricted refuses a plain pod with Kubernetes\' message', async () => {
  const { p } = setup({ 'pod-security.kubernetes.io/enforce': 'restricted' });
  const a = attrs('pods', 'CREATE', { object: pod('nginx', 'apps', { containers: [{ name: 'nginx', image: 'nginx' }] }) });
  const err = await rejection(() => p.validate!(a));
  assert.equal(err.code, 403);
  assert.equal(
    err.message,
    'pods "nginx" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "nginx" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "nginx" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "nginx" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  );
  assert.equal(a.auditAnnotations!['pod-security.kubernetes.io/enforce-policy'], 'restricted:latest');
  await p.validate!(attrs('pods', 'CREATE', { object: pod('ok', 'apps', RESTRICTED_OK) }));
});

test('PodSecurity: baseline checks (privileged, host namespaces, hostPath, hostPort, capabilities, sysctls)', async () => {
  const { p } = setup({ 'pod-security.kubernetes.io/enforce': 'baseline' });
  const err = await rejection(() =>
    p.validate!(
      attrs('pods', 'CREATE', {
        object: pod('bad', 'apps', {
          hostNetwork: true,
          hostPID: true,
          volumes: [{ name: 'root', hostPath: { path: '/' } }],
          securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }] },
          containers: [
            { name: 'a', image: 'x', securityContext: { privileged: true, capabilities: { add: ['SYS_ADMIN', 'NET_ADMIN', 'CHOWN'] } }, ports: [{ containerPort: 80, hostPort: 8080 }] },
            { name: 'b', image: 'x', securityContext: { privileged: true } },
          ],
        }),
      }),
    ),
  );
  assert.equal(
    err.message,
    'pods "bad" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities (container "a" must not include "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add), host namespaces (hostNetwork=true, hostPID=true), hostPath volumes (volume "root"), hostPort (container "a" uses hostPort 8080), privileged (containers "a", "b" must not set securityContext.privileged=true), forbidden sysctls (kernel.msgmax)',
  );
  // a plain pod is fine for baseline
  await p.validate!(attrs('pods', 'CREATE', { object: pod('plain', 'apps') }));
});

test('PodSecurity: warn adds a warning and admits; audit annotates', async () => {
  const { p } = setup({ 'pod-security.kubernetes.io/warn': 'restricted', 'pod-security.kubernetes.io/audit': 'baseline' });
  const a = attrs('pods', 'CREATE', { object: pod('web', 'apps', { containers: [{ name: 'web', image: 'nginx', securityContext: { privileged: true } }] }) });
  await p.validate!(a);
  assert.deepEqual(a.warnings, [
    'would violate PodSecurity "restricted:latest": privileged (container "web" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "web" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "web" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "web" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "web" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  ]);
  assert.deepEqual(a.auditAnnotations, {
    'pod-security.kubernetes.io/enforce-policy': 'privileged:latest',
    'pod-security.kubernetes.io/audit-violations': 'would violate PodSecurity "baseline:latest": privileged (container "web" must not set securityContext.privileged=true)',
  });
});

test('PodSecurity: an enforce level also warns when no warn level is set', async () => {
  const { policy } = policyToEvaluate({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.25' });
  assert.deepEqual(policy.warn, { level: 'baseline', version: 25 });
  assert.deepEqual(policy.audit, { level: 'privileged', version: LATEST });
});

test('PodSecurity: the version label picks the checks of that release', async () => {
  const plain = { containers: [{ name: 'c', image: 'x' }] };
  // before 1.19 there is no seccomp requirement, before 1.22 no capabilities one, before 1.8 no allowPrivilegeEscalation
  const at = (v: number) => evaluatePod({ level: 'restricted', version: v }, {}, plain).reasons;
  assert.deepEqual(at(5), ['runAsNonRoot != true']);
  assert.deepEqual(at(18), ['allowPrivilegeEscalation != false', 'runAsNonRoot != true']);
  assert.deepEqual(at(21), ['allowPrivilegeEscalation != false', 'runAsNonRoot != true', 'seccompProfile']);
  assert.deepEqual(at(24), ['allowPrivilegeEscalation != false', 'unrestricted capabilities', 'runAsNonRoot != true', 'seccompProfile']);
  // a windows pod is exempt from the Linux-only restricted checks since 1.25
  const win = { os: { name: 'windows' }, containers: [{ name: 'c', image: 'x' }] };
  assert.deepEqual(evaluatePod({ level: 'restricted', version: LATEST }, {}, win).reasons, ['runAsNonRoot != true']);
  // the 1.34 probe host check is newer than this server: latest is 1.33
  const probe = { containers: [{ name: 'c', image: 'x', livenessProbe: { httpGet: { host: 'example.com', port: 80 } } }] };
  assert.equal(evaluatePod({ level: 'baseline', version: LATEST }, {}, probe).allowed, true);
  assert.equal(forbiddenDetail(evaluatePod({ level: 'baseline', version: 34 }, {}, probe, 34)), 'probe or lifecycle host (container "c" uses probe or lifecycle host "example.com")');
});

test('PodSecurity: invalid labels refuse the namespace; a tightened enforce level warns about existing pods', async () => {
  const c = new MemoryCluster();
  c.namespace('apps');
  const p = podSecurity(c);
  const err = await rejection(() => p.validate!(attrs('namespaces', 'CREATE', { object: { metadata: { name: 'bad', labels: { 'pod-security.kubernetes.io/enforce': 'strict' } } }, name: 'bad', namespace: 'bad' })));
  assert.equal(err.code, 422);
  assert.equal(err.message, 'Namespace "bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted');
  c.add('', 'pods', pod('priv-1', 'apps', { containers: [{ name: 'c', image: 'x', securityContext: { privileged: true } }] }));
  c.add('', 'pods', pod('priv-2', 'apps', { containers: [{ name: 'c', image: 'x', securityContext: { privileged: true } }] }));
  c.add('', 'pods', pod('host', 'apps', { hostNetwork: true }));
  c.add('', 'pods', pod('fine', 'apps'));
  const old = c.get('', 'namespaces', '', 'apps');
  const next = structuredClone(old);
  next.metadata.labels['pod-security.kubernetes.io/enforce'] = 'baseline';
  const a = attrs('namespaces', 'UPDATE', { object: next, oldObject: old, name: 'apps', namespace: 'apps' });
  await p.validate!(a);
  assert.deepEqual(a.warnings, [
    'existing pods in namespace "apps" violate the new PodSecurity enforce level "baseline:latest"',
    'host: host namespaces',
    'priv-1 (and 1 other pod): privileged',
  ]);
});

test('PodSecurity: workloads get warnings and audit annotations, never refusals', async () => {
  const { p } = setup({ 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/warn': 'baseline' });
  const deploy = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'apps' },
    spec: { template: { metadata: {}, spec: { containers: [{ name: 'web', image: 'nginx', securityContext: { privileged: true } }] } } },
  };
  const a = attrs('deployments', 'CREATE', { object: deploy });
  await p.validate!(a);
  assert.deepEqual(a.warnings, ['would violate PodSecurity "baseline:latest": privileged (container "web" must not set securityContext.privileged=true)']);
});

test('PodSecurity: updates that change no image are not checked; status writes never are', async () => {
  const { p } = setup({ 'pod-security.kubernetes.io/enforce': 'restricted' });
  const bad = pod('web', 'apps', { containers: [{ name: 'web', image: 'nginx' }] });
  const relabeled = structuredClone(bad);
  relabeled.metadata.labels = { a: 'b' };
  await p.validate!(attrs('pods', 'UPDATE', { object: relabeled, oldObject: bad }));
  await p.validate!(attrs('pods', 'UPDATE', { object: bad, oldObject: bad, subresource: 'status' }));
  const newImage = structuredClone(bad);
  newImage.spec.containers[0].image = 'nginx:2';
  await rejection(() => p.validate!(attrs('pods', 'UPDATE', { object: newImage, oldObject: bad })));
});

test('PodSecurity: exemptions', async () => {
  const c = new MemoryCluster();
  c.namespace('apps', { 'pod-security.kubernetes.io/enforce': 'restricted' });
  const p = podSecurity(c, { exemptions: { usernames: ['system:serviceaccount:kube-system:replicaset-controller'], runtimeClasses: ['kata'] } });
  const a = attrs('pods', 'CREATE', { object: pod('web', 'apps'), user: { name: 'system:serviceaccount:kube-system:replicaset-controller', groups: [] } });
  await p.validate!(a);
  assert.equal(a.auditAnnotations!['pod-security.kubernetes.io/exempt'], 'user');
  await p.validate!(attrs('pods', 'CREATE', { object: pod('web', 'apps', { runtimeClassName: 'kata' }) }));
});
