// RuntimeClasses, recursive read-only mounts, a shortened grace period, supplemental groups,
// ephemeral containers (kubectl debug), probe and hook failures' words, the kubelet's admission
// (pods bound to a node they do not fit fail at once, as the kubelet's rejectPod leaves them: phase
// Failed, the reason, `Pod was rejected: <message>`, a Warning event, a count in
// kubelet_admission_rejections_total; runAsNonRoot; AppArmor) and user namespaces end to end: a real `keelson server`, a private containerd 1.6
// (runc, the default handler, configured under the name "runc") and `keelson kubelet`.
//   - A pod of a RuntimeClass whose handler is "runc" runs, its sandbox made with that handler (as
//     the runtime reports it); a class whose handler the runtime does not have fails the sandbox
//     with the runtime's error, in the kubelet's FailedCreatePodSandBox event.
//   - `hostUsers: false` (UserNamespacesSupport, on by default in 1.33): containerd 1.6 lists no
//     runtime handlers, so the kubelet refuses the sandbox (`the handler "" is not known`) rather
//     than run the pod with the host's user IDs; with the gate off, the pod fails as the kubelet
//     words it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, freePort, until, type Cluster } from './harness.js';
import { joiningKubeletArgs, writeJoiningKubeletConfig, KubeletProcess, podWhen, kubeletGet } from './kubeletharness.js';
import { startContainerd, type Containerd } from '../nodeagent/containerd.js';
import { CRIClient } from '../../src/nodeagent/cri.js';
import { quantityMilliValue, parseQuantity } from '../../src/schema/validation/quantity.js';
import { appArmorHostError } from '../../src/nodeagent/admission.js';

let c: Cluster;
let ctd: Containerd;
let cri: CRIClient;
let kubelet: KubeletProcess | undefined;
let dir: string;
let kubeletPort: number;
const NODE = 'keelson-runtimeclass-node';
const BUSYBOX = 'docker.io/library/busybox:local';

async function startKubelet(extra: string[] = []): Promise<void> {
  const k = new KubeletProcess([...joiningKubeletArgs({ cluster: c, dir, endpoint: ctd.endpoint, node: NODE, port: kubeletPort }), ...extra]);
  kubelet = k;
  await k.ready(c, NODE, 90_000);
}

function apply(yaml: string): void {
  const r = c.kubectl(['apply', '-f', '-'], { input: yaml });
  assert.equal(r.code, 0, r.stderr);
}

const podYAML = (name: string, spec: string, container = '') =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  nodeName: ${NODE}\n  terminationGracePeriodSeconds: 0\n${spec}  containers:\n  - name: c\n    image: ${BUSYBOX}\n    imagePullPolicy: Never\n    command: [sleep, "600"]\n${container}`;

async function getPod(name: string): Promise<any> {
  const r = await c.raw('GET', `/api/v1/namespaces/default/pods/${name}`);
  assert.equal(r.status, 200, r.text);
  return r.json();
}

/** the message of the pod's first event of this reason */
async function eventOf(pod: string, reason: string): Promise<string> {
  return until(
    `${reason} for ${pod}`,
    async () => {
      const r = await c.raw('GET', `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${pod},reason=${reason}`)}`);
      return r.json().items?.[0]?.message as string | undefined;
    },
    60_000,
  );
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
  dir = mkdtempSync(join(tmpdir(), 'keelson-kubelet-runtimeclass-'));
  ctd = await startContainerd();
  cri = await CRIClient.connect({ endpoint: ctd.endpoint, timeoutMs: 30_000 });
  c = await startCluster({ args: ['--storage-backend=memory'] });
  writeJoiningKubeletConfig(c, dir);
  kubeletPort = await freePort();
  await startKubelet();
});

after(async () => {
  if (c && kubelet) c.kubectl(['delete', 'pods', '--all', '--wait=true', '--timeout=60s']);
  await kubelet?.stop();
  cri?.close();
  await ctd?.stop();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a RuntimeClass\'s handler is the sandbox\'s; a handler the runtime lacks fails the sandbox with the runtime\'s error', async () => {
  apply('apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: plain\nhandler: runc\n---\napiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: kata\nhandler: kata\n');
  apply(podYAML('plain', '  runtimeClassName: plain\n'));
  await until('plain running', async () => (await getPod('plain')).status?.phase === 'Running', 60_000);
  const uid = (await getPod('plain')).metadata.uid;
  const sandboxes = await cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': uid } });
  assert.equal(sandboxes.length, 1, JSON.stringify(sandboxes));
  assert.equal(sandboxes[0]!.runtimeHandler, 'runc', 'the sandbox runs under the class\'s handler');

  apply(podYAML('kata', '  runtimeClassName: kata\n'));
  const msg = await eventOf('kata', 'FailedCreatePodSandBox');
  assert.match(msg, /^Failed to create pod sandbox: .*no runtime for "kata" is configured/);
  const p = await getPod('kata');
  assert.equal(p.status?.phase, 'Pending');
  assert.equal(p.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'ContainerCreating');
  c.kubectl(['delete', 'pod', 'plain', 'kata', '--wait=true', '--timeout=60s']);
});

test('recursive read-only mounts on a runtime without them (containerd 1.6): IfPossible is a plain read-only mount, reported Disabled; Enabled fails the container as the kubelet does', async () => {
  const pod = (name: string, mode: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  nodeName: ${NODE}\n  terminationGracePeriodSeconds: 0\n  volumes:\n  - name: v\n    emptyDir: {}\n  containers:\n  - name: c\n    image: ${BUSYBOX}\n    imagePullPolicy: Never\n    command: [sleep, "600"]\n    volumeMounts:\n    - {name: v, mountPath: /rro, readOnly: true, recursiveReadOnly: ${mode}}\n    - {name: v, mountPath: /ro, readOnly: true}\n    - {name: v, mountPath: /rw}\n`;
  apply(pod('rro-maybe', 'IfPossible'));
  await until('rro-maybe running', async () => (await getPod('rro-maybe')).status?.phase === 'Running', 60_000);
  const st = (await getPod('rro-maybe')).status.containerStatuses[0].volumeMounts.filter((m: any) => m.name === 'v');
  assert.deepEqual(st, [
    { name: 'v', mountPath: '/rro', readOnly: true, recursiveReadOnly: 'Disabled' },
    { name: 'v', mountPath: '/ro', readOnly: true, recursiveReadOnly: 'Disabled' },
    { name: 'v', mountPath: '/rw' },
  ]);
  apply(pod('rro-must', 'Enabled'));
  const p = await until('rro-must refused', async () => {
    const w = (await getPod('rro-must')).status?.containerStatuses?.[0]?.state?.waiting;
    return w?.reason === 'CreateContainerConfigError' ? w : undefined;
  }, 60_000);
  assert.equal(p.message, 'failed to resolve recursive read-only mode: volume "v" requested recursive read-only mode, but it is not supported by the runtime');
  c.kubectl(['delete', 'pod', 'rro-maybe', 'rro-must', '--wait=true', '--timeout=60s']);
});

test('a deletion\'s grace period shortened while the pod stops: its containers are stopped within the shorter one', async () => {
  // (sh as PID 1 ignores SIGTERM: the container lives out its grace period)
  apply(`apiVersion: v1\nkind: Pod\nmetadata:\n  name: slow-stop\nspec:\n  nodeName: ${NODE}\n  terminationGracePeriodSeconds: 60\n  containers:\n  - name: c\n    image: ${BUSYBOX}\n    imagePullPolicy: Never\n    command: [sh, -c, "sleep 600"]\n`);
  await until('slow-stop running', async () => (await getPod('slow-stop')).status?.phase === 'Running', 60_000);
  assert.equal(c.kubectl(['delete', 'pod', 'slow-stop', '--wait=false']).code, 0);
  await until('slow-stop terminating', async () => (await getPod('slow-stop')).metadata.deletionTimestamp, 10_000);
  await new Promise((r) => setTimeout(r, 1000));
  const started = Date.now();
  const d = c.kubectl(['delete', 'pod', 'slow-stop', '--grace-period=1', '--wait=true', '--timeout=40s']);
  assert.equal(d.code, 0, d.stderr);
  assert.ok(Date.now() - started < 20_000, `gone ${Date.now() - started} ms after the grace period was shortened to 1 s (it was 60 s)`);
});

test('fsGroup and supplementalGroups are the containers\' supplemental groups (fsGroup first): a user not owning an fsGroup volume writes to it through the group; setHostnameAsFQDN; the node reports the handlers and features the runtime lists', async () => {
  apply(`apiVersion: v1\nkind: Pod\nmetadata:\n  name: groups\nspec:\n  nodeName: ${NODE}\n  terminationGracePeriodSeconds: 0\n  restartPolicy: Never\n  hostname: h\n  subdomain: s\n  setHostnameAsFQDN: true\n  securityContext:\n    runAsUser: 1000\n    runAsGroup: 3000\n    fsGroup: 2000\n    supplementalGroups: [4000]\n  volumes:\n  - name: v\n    emptyDir: {}\n  containers:\n  - name: c\n    image: ${BUSYBOX}\n    imagePullPolicy: Never\n    command: [sh, -c, "id; touch /data/f && ls -ln /data/f; hostname"]\n    volumeMounts:\n    - {name: v, mountPath: /data}\n`);
  const p = await until('groups ended', async () => {
    const pod = await getPod('groups');
    return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed' ? pod : undefined;
  }, 60_000);
  const logs = c.kubectl(['logs', 'groups']);
  assert.equal(p.status.phase, 'Succeeded', logs.stdout + logs.stderr);
  const [id, file, hostname] = logs.stdout.trim().split('\n');
  assert.match(id!, /^uid=1000 gid=3000 groups=2000,(3000,)?4000$/, 'the fsGroup, then the supplemental groups');
  // (the emptyDir is root's, group 2000 with the setgid bit: the file takes the group)
  assert.match(file!, /^-\S+\s+\d+\s+1000\s+2000\s/, file);
  // setHostnameAsFQDN: the kernel's host name is the pod's FQDN; one too long for it refuses the sandbox
  assert.match(hostname!, /^h\.s\.default\.svc\.[a-z.]*$/, hostname);
  const long = 'x'.repeat(55);
  apply(podYAML('fqdn-long', `  hostname: ${long}\n  subdomain: s\n  setHostnameAsFQDN: true\n`));
  const fqdn = `${long}.s.default.svc.${hostname!.slice('h.s.default.svc.'.length)}`;
  assert.equal(await eventOf('fqdn-long', 'FailedCreatePodSandBox'), `Failed to create pod sandbox: failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (64 characters is the max, ${fqdn.length} characters requested)`);
  c.kubectl(['delete', 'pod', 'groups', 'fqdn-long', '--wait=true', '--timeout=60s']);

  // what the kubelet's RuntimeHandlers and NodeFeatures setters report: the runtime's own lists
  const status = (await cri.status()) as any;
  const node = (await c.raw('GET', `/api/v1/nodes/${NODE}`)).json();
  const handlers = (status.runtimeHandlers ?? []).map((h: any) => ({ name: h.name ?? '', features: { recursiveReadOnlyMounts: h.features?.recursiveReadOnlyMounts === true, userNamespaces: h.features?.userNamespaces === true } }));
  assert.deepEqual(node.status.runtimeHandlers, handlers.length ? handlers : undefined);
  assert.deepEqual(node.status.features, status.features ? { supplementalGroupsPolicy: status.features.supplementalGroupsPolicy === true } : undefined);
});

test('kubectl debug <pod> --target: the ephemeral container runs once in the target\'s PID namespace, never restarted, with its own status and events', async () => {
  apply(podYAML('debugged', ''));
  await until('debugged running', async () => (await getPod('debugged')).status?.phase === 'Running', 60_000);
  const d = c.kubectl(['debug', 'debugged', `--image=${BUSYBOX}`, '--image-pull-policy=Never', '--target=c', '--profile=general', '--', 'sh', '-c', 'ps -o pid,args; exit 3']);
  assert.equal(d.code, 0, d.stderr);
  const name = /Defaulting debug container name to (\S+)\./.exec(d.stdout + d.stderr)?.[1];
  assert.ok(name, d.stdout + d.stderr);
  const p = await until('the ephemeral container ended', async () => {
    const pod = await getPod('debugged');
    return pod.status?.ephemeralContainerStatuses?.[0]?.state?.terminated ? pod : undefined;
  }, 60_000);
  const st = p.status.ephemeralContainerStatuses[0];
  assert.equal(st.name, name);
  assert.equal(st.state.terminated.exitCode, 3);
  assert.equal(st.ready, false);
  assert.equal(st.restartCount, 0);
  assert.equal('started' in st, false, 'the prober does not see ephemeral containers');
  assert.match(st.containerID, /^containerd:\/\//);
  // the pod goes on running; its own container is untouched
  assert.equal(p.status.phase, 'Running');
  assert.equal(p.status.containerStatuses[0].restartCount, 0);
  // in the target's PID namespace: the target's sleep is PID 1
  const logs = c.kubectl(['logs', 'debugged', '-c', name!]);
  assert.match(logs.stdout, /^\s*1\s+sleep 600$/m, logs.stdout);
  // never started again (an exit is final)
  await new Promise((r) => setTimeout(r, 3000));
  const again = (await getPod('debugged')).status.ephemeralContainerStatuses;
  assert.equal(again.length, 1);
  assert.equal(again[0].containerID, st.containerID);
  const started = await until('the Started event', async () => {
    const r = await c.raw('GET', `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(`involvedObject.name=debugged,reason=Started`)}`);
    return (r.json().items ?? []).find((e: any) => e.message === `Started container ${name}`);
  });
  assert.deepEqual([started.involvedObject.kind, started.involvedObject.apiVersion, started.involvedObject.fieldPath], ['Pod', 'v1', `spec.ephemeralContainers{${name}}`]);
  c.kubectl(['delete', 'pod', 'debugged', '--wait=true', '--timeout=60s']);
});

test('probe and lifecycle hook failures in the kubelet\'s words: an exec probe\'s output, an exec the runtime cannot run as an error, a postStart exec\'s error and output, a bare PreStopHook failed', async () => {
  apply(`apiVersion: v1\nkind: Pod\nmetadata:\n  name: hooks\nspec:\n  nodeName: ${NODE}\n  terminationGracePeriodSeconds: 5\n  containers:\n  - name: c\n    image: ${BUSYBOX}\n    imagePullPolicy: Never\n    command: [sleep, "600"]\n    readinessProbe:\n      exec: {command: [sh, -c, "echo not yet; exit 1"]}\n      periodSeconds: 1\n    livenessProbe:\n      exec: {command: [no-such-binary]}\n      periodSeconds: 1\n      failureThreshold: 1000\n    lifecycle:\n      preStop:\n        exec: {command: [sh, -c, "exit 7"]}\n  - name: p\n    image: ${BUSYBOX}\n    imagePullPolicy: Never\n    command: [sleep, "600"]\n    lifecycle:\n      postStart:\n        exec: {command: [sh, -c, "echo out; echo err >&2; exit 2"]}\n`);
  const uid = await until('hooks made', async () => (await c.raw('GET', '/api/v1/namespaces/default/pods/hooks')).json().metadata?.uid as string | undefined);
  const messages = async (reason: string) => {
    const r = await c.raw('GET', `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(`involvedObject.name=hooks,reason=${reason}`)}`);
    return (r.json().items ?? []).map((e: any) => `${e.involvedObject.fieldPath} ${e.message}`) as string[];
  };
  const unhealthy = await until('both probes\' events', async () => {
    const m = await messages('Unhealthy');
    return m.some((x) => x.includes('Readiness')) && m.some((x) => x.includes('Liveness')) ? m : undefined;
  }, 60_000);
  assert.ok(unhealthy.includes('spec.containers{c} Readiness probe failed: not yet\n'), JSON.stringify(unhealthy));
  const live = unhealthy.find((x) => x.includes('Liveness'))!;
  assert.match(live, /^spec\.containers\{c\} Liveness probe errored and resulted in unknown state: rpc error: code = \w+ desc = .*no-such-binary/, live);
  const [post] = await until('FailedPostStartHook', async () => {
    const m = await messages('FailedPostStartHook');
    return m.length ? m : undefined;
  }, 60_000);
  assert.equal(post, `spec.containers{p} Exec lifecycle hook ([sh -c echo out; echo err >&2; exit 2]) for Container "p" in Pod "hooks_default(${uid})" failed - error: command 'sh -c echo out; echo err >&2; exit 2' exited with 2: err\n, message: "out\\nerr\\n"`);
  assert.equal(c.kubectl(['delete', 'pod', 'hooks', '--wait=true', '--timeout=60s']).code, 0);
  assert.deepEqual(await messages('FailedPreStopHook'), ['spec.containers{c} PreStopHook failed']);
});

test('a failed liveness probe kills the container within the probe\'s terminationGracePeriodSeconds, not the pod\'s', async () => {
  // (sh as PID 1 ignores SIGTERM: the container lives out whatever grace period it is given)
  apply(`apiVersion: v1\nkind: Pod\nmetadata:\n  name: probe-grace\nspec:\n  nodeName: ${NODE}\n  terminationGracePeriodSeconds: 120\n  containers:\n  - name: c\n    image: ${BUSYBOX}\n    imagePullPolicy: Never\n    command: [sh, -c, "sleep 600"]\n    livenessProbe:\n      exec: {command: [sh, -c, "exit 1"]}\n      periodSeconds: 1\n      failureThreshold: 1\n      terminationGracePeriodSeconds: 1\n`);
  const p = await until('restarted after the liveness failure', async () => {
    const pod = await getPod('probe-grace');
    return (pod.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 ? pod : undefined;
  }, 40_000);
  const last = p.status.containerStatuses[0].lastState.terminated;
  assert.ok(last, JSON.stringify(p.status.containerStatuses[0]));
  // (killed by SIGKILL after the probe's second, not the pod's two minutes)
  assert.equal(last.exitCode, 137);
  assert.ok(Date.parse(last.finishedAt) - Date.parse(last.startedAt) < 30_000, JSON.stringify(last));
  assert.equal(c.kubectl(['delete', 'pod', 'probe-grace', '--grace-period=1', '--wait=true', '--timeout=60s']).code, 0);
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
  const metrics = (await kubeletGet(c, kubeletPort, '/metrics')).split('\n').filter((l) => l.startsWith('kubelet_admission_rejections_total')).sort();
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
    const metrics = (await kubeletGet(c, kubeletPort, '/metrics')).split('\n').filter((l) => l.startsWith('kubelet_admission_rejections_total{reason="AppArmor"}'));
    assert.deepEqual(metrics, ['kubelet_admission_rejections_total{reason="AppArmor"} 1']);
  } else {
    // (a host that enforces AppArmor: the runtime applies its default profile)
    await podWhen(c, 'default', 'apparmor', 'Running', (x) => x.status?.phase === 'Running', logs);
  }
});

/** POST, expecting 201; the created object */
async function post(path: string, body: any): Promise<any> {
  const r = await c.raw('POST', path, { body });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

test('persistentVolumeClaim volumes: a claim bound to a hostPath PV is mounted (a file written in the pod is on the host; the claim readOnly, the mount is read-only); a local PV; an unbound or missing claim, or a PV of another type, fails the mount in WaitForAttachAndMount\'s words, a local path missing in the plugin\'s', async () => {
  const host = mkdtempSync(join(tmpdir(), 'keelson-pv-'));
  try {
    writeFileSync(join(host, 'in'), 'from-host\n');
    // each claim pre-bound to its volume (the volume's claimRef names it, the claim's volumeName the
    // volume), which the PV controller binds: bound by hand here, a claim would race the controller,
    // which sets a claim whose volume it has not seen yet back to Pending, as Kubernetes' does. (The
    // waits for Bound allow the controller's resync, 15 s: a claim synced before its volume reached
    // the controller's cache waits for it, as in Kubernetes)
    const claim = (name: string, volumeName?: string) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', resources: { requests: { storage: '1Gi' } }, ...(volumeName ? { volumeName } : {}) } });
    const bound = async (name: string, source: Record<string, unknown>) => {
      await post('/api/v1/persistentvolumes', {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name },
        spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: '', persistentVolumeReclaimPolicy: 'Retain', ...source, claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name } },
      });
      await post('/api/v1/namespaces/default/persistentvolumeclaims', claim(name, name));
      await until(`claim ${name} Bound`, async () => {
        const r = await c.raw('GET', `/api/v1/namespaces/default/persistentvolumeclaims/${name}`);
        return r.status === 200 && r.json().status?.phase === 'Bound';
      });
    };
    const onNode = { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [NODE] }] }] } };
    await bound('host-claim', { hostPath: { path: host, type: 'Directory' } });
    await bound('local-claim', { local: { path: host }, nodeAffinity: onNode });
    await bound('gone-claim', { local: { path: join(host, 'missing') }, nodeAffinity: onNode });
    await bound('nfs-claim', { nfs: { server: '192.0.2.1', path: '/export' } });
    await post('/api/v1/namespaces/default/persistentvolumeclaims', claim('loose-claim'));
    const pvPod = (name: string, claimName: string, script: string, readOnly = false) =>
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  nodeName: ${NODE}\n  restartPolicy: Never\n  terminationGracePeriodSeconds: 0\n  volumes:\n  - name: data\n    persistentVolumeClaim: {claimName: ${claimName}, readOnly: ${readOnly}}\n  containers:\n  - name: c\n    image: ${BUSYBOX}\n    imagePullPolicy: Never\n    command: [sh, -c, '${script}']\n    volumeMounts:\n    - {name: data, mountPath: /data}\n`;
    apply(pvPod('pv-writer', 'host-claim', 'cat /data/in && echo from-pod > /data/out'));
    apply(pvPod('pv-reader', 'host-claim', 'cat /data/in; if touch /data/x 2>/dev/null; then echo writable; else echo read-only; fi', true));
    apply(pvPod('pv-local', 'local-claim', 'cat /data/in'));
    for (const [name, claimName] of [['pv-loose', 'loose-claim'], ['pv-noclaim', 'nope'], ['pv-gone', 'gone-claim'], ['pv-nfs', 'nfs-claim']]) apply(pvPod(name!, claimName!, 'true'));
    for (const name of ['pv-writer', 'pv-reader', 'pv-local']) await podWhen(c, 'default', name, 'Succeeded', (p) => p.status?.phase === 'Succeeded', logs, 30_000);
    assert.equal(readFileSync(join(host, 'out'), 'utf8'), 'from-pod\n');
    assert.equal(c.kubectl(['logs', 'pv-writer']).stdout, 'from-host\n');
    assert.equal(c.kubectl(['logs', 'pv-reader']).stdout, 'from-host\nread-only\n');
    assert.equal(c.kubectl(['logs', 'pv-local']).stdout, 'from-host\n');
    const unable = (why: string) => `Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: ${why}`;
    assert.equal(await eventOf('pv-loose', 'FailedMount'), unable('error processing PVC default/loose-claim: PVC is not bound'));
    assert.equal(await eventOf('pv-noclaim', 'FailedMount'), unable('error processing PVC default/nope: failed to fetch PVC from API server: persistentvolumeclaims "nope" not found'));
    assert.match(await eventOf('pv-nfs', 'FailedMount'), /^Unable to attach or mount volumes: .*: failed to get Plugin from volumeSpec for volume "nfs-claim" err=no volume plugin matched/);
    assert.equal(await eventOf('pv-gone', 'FailedMount'), `MountVolume.GetDeviceMountPath failed for volume "gone-claim" : path "${join(host, 'missing')}" does not exist`);
    const w = (await getPod('pv-loose')).status?.containerStatuses?.[0]?.state?.waiting;
    assert.equal(w?.reason, 'ContainerCreating');
  } finally {
    c.kubectl(['delete', 'pod', 'pv-writer', 'pv-reader', 'pv-local', 'pv-loose', 'pv-noclaim', 'pv-gone', 'pv-nfs', '--ignore-not-found', '--wait=true', '--timeout=60s']);
    rmSync(host, { recursive: true, force: true });
  }
});

test('generic ephemeral volumes: the claim <pod>-<volume> the ephemeral volume controller made from the template, bound to a hostPath PV, is mounted (a file written in the pod is on the host); a claim of that name the pod does not control fails the mount in the kubelet\'s words', async () => {
  const host = mkdtempSync(join(tmpdir(), 'keelson-eph-'));
  try {
    const ephPod = (name: string, volumeName: string, scheduled: boolean) =>
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  ${scheduled ? `nodeName: ${NODE}` : 'schedulerName: manual'}\n  restartPolicy: Never\n  terminationGracePeriodSeconds: 0\n  volumes:\n  - name: data\n    ephemeral:\n      volumeClaimTemplate:\n        spec: {accessModes: [ReadWriteOnce], storageClassName: "", volumeName: ${volumeName}, resources: {requests: {storage: 1Gi}}}\n  containers:\n  - name: c\n    image: ${BUSYBOX}\n    imagePullPolicy: Never\n    command: [sh, -c, 'echo from-eph > /data/out']\n    volumeMounts:\n    - {name: data, mountPath: /data}\n`;
    const pv = (name: string, claimName: string) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: '', persistentVolumeReclaimPolicy: 'Retain', hostPath: { path: host, type: 'Directory' }, claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: claimName } },
    });
    // the pod waits unscheduled (schedulerName manual) while the controller makes its claim, which
    // the binder binds to the PV reserved for it; then it is bound to the node
    await post('/api/v1/persistentvolumes', pv('eph-pv', 'eph-writer-data'));
    apply(ephPod('eph-writer', 'eph-pv', false));
    const claim = await until('claim eph-writer-data bound', async () => {
      const r = await c.raw('GET', '/api/v1/namespaces/default/persistentvolumeclaims/eph-writer-data');
      return r.status === 200 && r.json().status?.phase === 'Bound' ? r.json() : undefined;
    }, 20_000);
    assert.equal(claim.metadata.ownerReferences?.[0]?.name, 'eph-writer');
    await post('/api/v1/namespaces/default/pods/eph-writer/binding', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'eph-writer' }, target: { apiVersion: 'v1', kind: 'Node', name: NODE } });

    // a claim of the pod's name, pre-bound to a volume (which the binder binds), that the pod does not control
    await post('/api/v1/persistentvolumes', pv('eph-foreign-pv', 'eph-foreign-data'));
    await post('/api/v1/namespaces/default/persistentvolumeclaims', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'eph-foreign-data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', volumeName: 'eph-foreign-pv', resources: { requests: { storage: '1Gi' } } } });
    await until('claim eph-foreign-data bound', async () => {
      const r = await c.raw('GET', '/api/v1/namespaces/default/persistentvolumeclaims/eph-foreign-data');
      return r.status === 200 && r.json().status?.phase === 'Bound';
    }, 20_000);
    apply(ephPod('eph-foreign', 'eph-foreign-pv', true));

    await podWhen(c, 'default', 'eph-writer', 'Succeeded', (p) => p.status?.phase === 'Succeeded', logs, 15_000);
    assert.equal(readFileSync(join(host, 'out'), 'utf8'), 'from-eph\n');
    assert.equal(
      await eventOf('eph-foreign', 'FailedMount'),
      'Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: PVC default/eph-foreign-data was not created for pod default/eph-foreign (pod is not owner)',
    );
  } finally {
    c.kubectl(['delete', 'pod', 'eph-writer', 'eph-foreign', '--ignore-not-found', '--wait=true', '--timeout=60s']);
    c.kubectl(['delete', 'pvc', 'eph-foreign-data', '--ignore-not-found', '--wait=false']);
    rmSync(host, { recursive: true, force: true });
  }
});

test('hostUsers: false on a runtime without user namespaces: the sandbox is refused, never run with the host\'s IDs; with the gate off the pod fails too', async () => {
  apply(podYAML('userns', '  hostUsers: false\n'));
  assert.equal(await eventOf('userns', 'FailedCreatePodSandBox'), 'Failed to create pod sandbox: the handler "" is not known');
  const uid = (await getPod('userns')).metadata.uid;
  assert.deepEqual(await cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': uid } }), [], 'no sandbox made');
  c.kubectl(['delete', 'pod', 'userns', '--wait=true', '--timeout=60s']);

  await kubelet?.stop();
  await startKubelet(['--feature-gates=UserNamespacesSupport=false']);
  apply(podYAML('userns-off', '  hostUsers: true\n'));
  assert.equal(await eventOf('userns-off', 'FailedCreatePodSandBox'), 'Failed to create pod sandbox: the feature gate "UserNamespacesSupport" is disabled: can\'t set spec.HostUsers');
  c.kubectl(['delete', 'pod', 'userns-off', '--wait=true', '--timeout=60s']);
});
