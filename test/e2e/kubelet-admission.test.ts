// The kubelet's predicate admission end to end: a real `keelson server`, a private containerd 1.6
// and `keelson kubelet`, pods given their node directly (spec.nodeName: no scheduler to keep them
// off a node they do not fit). A pod the node cannot take fails at once, as the kubelet's
// rejectPod leaves it (phase Failed, the reason, `Pod was rejected: <message>`, a Warning event
// from the kubelet that `kubectl describe` and `kubectl get events` show, a count in
// kubelet_admission_rejections_total); a pod that fits runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, freePort, until, type Cluster } from './harness.js';
import { joiningKubeletArgs, writeJoiningKubeletConfig, KubeletProcess, podWhen, kubeletGet } from './kubeletharness.js';
import { startContainerd, type Containerd } from '../nodeagent/containerd.js';
import { quantityMilliValue, parseQuantity } from '../../src/schema/validation/quantity.js';
import { appArmorHostError } from '../../src/nodeagent/admission.js';

let c: Cluster;
let ctd: Containerd;
let kubelet: KubeletProcess | undefined;
let dir: string;
let port: number;
const NODE = 'keelson-admission-node';
const BUSYBOX = 'docker.io/library/busybox:local';

const podYAML = (name: string, spec: string, container = '') =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  nodeName: ${NODE}\n  terminationGracePeriodSeconds: 0\n${spec}  containers:\n  - name: c\n    image: ${BUSYBOX}\n    imagePullPolicy: Never\n    command: [sleep, "600"]\n${container}`;

function apply(yaml: string): void {
  const r = c.kubectl(['apply', '-f', '-'], { input: yaml });
  assert.equal(r.code, 0, r.stderr);
}

const logs = () => `the kubelet's log ends:\n${kubelet?.tail() ?? ''}`;

/** the pod once it failed; asserts the kubelet's rejection (reason, status message, its Warning event) */
async function rejected(name: string, reason: string, message: string): Promise<void> {
  const p = await podWhen(c, 'default', name, 'Failed', (x) => x.status?.phase === 'Failed', logs, 30_000);
  assert.deepEqual([p.status.reason, p.status.message], [reason, `Pod was rejected: ${message}`]);
  const ev = await until(`${reason} event for ${name}`, async () => {
    const r = await c.raw('GET', `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${name},reason=${reason}`)}`);
    return r.json().items?.[0];
  }, 20_000);
  assert.deepEqual([ev.type, ev.message, ev.source?.component, ev.source?.host], ['Warning', message, 'kubelet', NODE]);
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-kubelet-admission-'));
  [ctd, c] = await Promise.all([startContainerd(), startCluster({ args: ['--storage-backend=memory'] })]);
  writeJoiningKubeletConfig(c, dir);
  port = await freePort();
  kubelet = new KubeletProcess(joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port }));
  await kubelet.ready(c, NODE, 90_000);
});

after(async () => {
  if (c && kubelet) c.kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=60s']);
  await kubelet?.stop();
  await ctd?.stop();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('pods bound to a node they do not fit fail with the kubelet\'s reasons; a pod that fits runs', async () => {
  // a pod that fits, holding a host port
  apply(podYAML('fits', '', '    resources: {requests: {cpu: 10m, memory: 8Mi}}\n    ports: [{containerPort: 80, hostPort: 18080}]\n'));
  await podWhen(c, 'default', 'fits', 'Running', (x) => x.status?.phase === 'Running', logs);
  const node = (await c.raw('GET', `/api/v1/nodes/${NODE}`)).json();
  const capacity = quantityMilliValue(parseQuantity(node.status.allocatable.cpu)!);

  apply(podYAML('too-big', '', '    resources: {requests: {cpu: "1000"}}\n'));
  apply(podYAML('no-match', '  nodeSelector: {disk: ssd}\n'));
  apply(podYAML('strict', '  securityContext: {supplementalGroupsPolicy: Strict}\n'));
  apply(podYAML('port-taken', '', '    ports: [{containerPort: 80, hostPort: 18080}]\n'));

  const cpuMessage = `Node didn't have enough resource: cpu, requested: 1000000, used: 10, capacity: ${capacity}`;
  await rejected('too-big', 'OutOfcpu', cpuMessage);
  await rejected('no-match', 'NodeAffinity', "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector");
  // (containerd 1.6 reports no runtime features: the node does not say it supports the policy)
  await rejected('strict', 'SupplementalGroupsPolicyNotSupported', 'SupplementalGroupsPolicy=Strict is not supported in this node');
  await rejected('port-taken', 'NodePorts', "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports");

  // what kubectl shows of it
  const d = c.kubectl(['describe', 'pod', 'too-big']);
  assert.equal(d.code, 0, d.stderr);
  assert.match(d.stdout, /^Status:\s+Failed$/m);
  assert.match(d.stdout, /^Reason:\s+OutOfcpu$/m);
  const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  assert.match(d.stdout, new RegExp(`^Message:\\s+Pod was rejected: ${esc(cpuMessage)}$`, 'm'));
  assert.match(d.stdout, new RegExp(`Warning\\s+OutOfcpu\\s+\\S+\\s+kubelet\\s+${esc(cpuMessage)}$`, 'm'));
  const ev = c.kubectl(['get', 'events', '--field-selector', 'involvedObject.name=no-match', '-o', 'custom-columns=TYPE:.type,REASON:.reason,MESSAGE:.message', '--no-headers']);
  assert.equal(ev.code, 0, ev.stderr);
  assert.equal(ev.stdout.trim().replace(/ +/g, ' '), "Warning NodeAffinity Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector");

  // counted by the kubelet's allowlisted reasons: the scheduler plugins' as Other
  const metrics = (await kubeletGet(c, port, '/metrics')).split('\n').filter((l) => l.startsWith('kubelet_admission_rejections_total')).sort();
  assert.deepEqual(metrics, [
    'kubelet_admission_rejections_total{reason="Other"} 2',
    'kubelet_admission_rejections_total{reason="OutOfcpu"} 1',
    'kubelet_admission_rejections_total{reason="SupplementalGroupsPolicyNotSupported"} 1',
  ]);

  // the pod that fits still runs
  const fits = (await c.raw('GET', '/api/v1/namespaces/default/pods/fits')).json();
  assert.equal(fits.status.phase, 'Running');
});

test('runAsNonRoot: a container whose image runs as root, or whose runAsUser is 0, is not started (CreateContainerConfigError in the kubelet\'s words); a non-root runAsUser runs', async () => {
  apply(podYAML('nonroot-image', '  securityContext: {runAsNonRoot: true}\n'));
  apply(podYAML('nonroot-zero', '', '    securityContext: {runAsNonRoot: true, runAsUser: 0}\n'));
  apply(podYAML('nonroot-ok', '  securityContext: {runAsNonRoot: true}\n', '    securityContext: {runAsUser: 1000}\n'));
  const waiting = async (name: string) => {
    const p = await podWhen(c, 'default', name, 'CreateContainerConfigError', (x) => x.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError', logs, 30_000);
    return { message: p.status.containerStatuses[0].state.waiting.message as string, uid: p.metadata.uid as string };
  };
  const image = await waiting('nonroot-image');
  assert.equal(image.message, `container has runAsNonRoot and image will run as root (pod: "nonroot-image_default(${image.uid})", container: c)`);
  const zero = await waiting('nonroot-zero');
  assert.equal(zero.message, `container's runAsUser breaks non-root policy (pod: "nonroot-zero_default(${zero.uid})", container: c)`);
  const ev = await until('the Failed event', async () => {
    const r = await c.raw('GET', `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent('involvedObject.name=nonroot-image,reason=Failed')}`);
    return r.json().items?.[0];
  }, 20_000);
  assert.deepEqual([ev.type, ev.message, ev.involvedObject.fieldPath], ['Warning', `Error: ${image.message}`, 'spec.containers{c}']);
  await podWhen(c, 'default', 'nonroot-ok', 'Running', (x) => x.status?.phase === 'Running', logs);
});

test('AppArmor: a pod asking for a profile on a host without AppArmor is refused (reason AppArmor); Unconfined runs (with seLinuxOptions)', async () => {
  apply(podYAML('apparmor', '  securityContext: {appArmorProfile: {type: RuntimeDefault}}\n'));
  // (with seLinuxOptions too: passed on, and ignored by a runtime on a host without SELinux)
  apply(podYAML('apparmor-off', '  securityContext: {seLinuxOptions: {level: "s0:c1,c2"}}\n', '    securityContext: {appArmorProfile: {type: Unconfined}}\n'));
  await podWhen(c, 'default', 'apparmor-off', 'Running', (x) => x.status?.phase === 'Running', logs);
  const host = appArmorHostError();
  if (host) {
    await rejected('apparmor', 'AppArmor', `Cannot enforce AppArmor: ${host}`);
    const metrics = (await kubeletGet(c, port, '/metrics')).split('\n').filter((l) => l.startsWith('kubelet_admission_rejections_total{reason="AppArmor"}'));
    assert.deepEqual(metrics, ['kubelet_admission_rejections_total{reason="AppArmor"} 1']);
  } else {
    // (a host that enforces AppArmor: the runtime applies its default profile)
    await podWhen(c, 'default', 'apparmor', 'Running', (x) => x.status?.phase === 'Running', logs);
  }
});
