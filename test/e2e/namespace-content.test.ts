// What every namespace gets from the controller manager `keelson server` runs: the `default`
// ServiceAccount (serviceaccount-controller) and the `kube-root-ca.crt` ConfigMap
// (root-ca-certificate-publisher-controller), each put back when deleted; and what pods get
// from admission because of them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCluster, type Cluster } from './harness.js';

let c: Cluster;

before(async () => {
  c = await startCluster();
});

after(async () => {
  await c?.stop();
});

async function until<T>(what: string, f: () => T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function kubectl(args: string[], input?: string): { code: number; stdout: string; stderr: string } {
  return c.kubectl(args, { input, timeoutMs: 60_000 });
}

function ok(args: string[], input?: string): string {
  const r = kubectl(args, input);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const getJSON = (args: string[]) => {
  const r = kubectl([...args, '-o', 'json']);
  return r.code === 0 ? JSON.parse(r.stdout) : undefined;
};

test('a new namespace gets the default ServiceAccount and the root CA ConfigMap; both come back when deleted', async () => {
  const ca = readFileSync(join(c.dataDir, 'pki', 'ca.crt'), 'utf8');
  for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
    await until(`the default ServiceAccount of ${ns}`, () => getJSON(['get', 'serviceaccount', 'default', '-n', ns]));
    const cm = await until(`kube-root-ca.crt in ${ns}`, () => getJSON(['get', 'configmap', 'kube-root-ca.crt', '-n', ns]));
    assert.equal(cm.data['ca.crt'], ca);
  }
  ok(['create', 'namespace', 'team-a']);
  const sa = await until('the default ServiceAccount of team-a', () => getJSON(['get', 'serviceaccount', 'default', '-n', 'team-a']));
  assert.equal(sa.metadata.namespace, 'team-a');
  const cm = await until('kube-root-ca.crt in team-a', () => getJSON(['get', 'configmap', 'kube-root-ca.crt', '-n', 'team-a']));
  assert.deepEqual(Object.keys(cm.data), ['ca.crt']);
  assert.equal(cm.data['ca.crt'], ca);
  assert.ok(cm.metadata.annotations['kubernetes.io/description']);

  // deleted: created again (a new uid)
  ok(['delete', 'serviceaccount', 'default', '-n', 'team-a']);
  ok(['delete', 'configmap', 'kube-root-ca.crt', '-n', 'team-a']);
  await until('the default ServiceAccount back', () => {
    const o = getJSON(['get', 'serviceaccount', 'default', '-n', 'team-a']);
    return o && o.metadata.uid !== sa.metadata.uid && o;
  });
  await until('kube-root-ca.crt back', () => {
    const o = getJSON(['get', 'configmap', 'kube-root-ca.crt', '-n', 'team-a']);
    return o && o.metadata.uid !== cm.metadata.uid && o;
  });

  // changed: put right again
  ok(['patch', 'configmap', 'kube-root-ca.crt', '-n', 'team-a', '--type', 'merge', '-p', '{"data":{"ca.crt":"tampered","extra":"x"}}']);
  await until('kube-root-ca.crt restored', () => {
    const o = getJSON(['get', 'configmap', 'kube-root-ca.crt', '-n', 'team-a']);
    return o && o.data['ca.crt'] === ca && o.data.extra === undefined && o;
  });
  // the description annotation is put back; binaryData is not the publisher's, and stays
  ok(['annotate', 'configmap', 'kube-root-ca.crt', '-n', 'team-a', 'kubernetes.io/description-']);
  ok(['patch', 'configmap', 'kube-root-ca.crt', '-n', 'team-a', '--type', 'merge', '-p', '{"binaryData":{"b":"AAA="}}']);
  const repaired = await until('the description back', () => {
    const o = getJSON(['get', 'configmap', 'kube-root-ca.crt', '-n', 'team-a']);
    return o?.metadata.annotations?.['kubernetes.io/description'] && o;
  });
  assert.equal(
    repaired.metadata.annotations['kubernetes.io/description'],
    'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.',
  );
  assert.deepEqual(repaired.binaryData, { b: 'AAA=' });
  // the controllers write as kube-controller-manager (the first part of their User-Agent)
  const managed = JSON.parse(kubectl(['get', 'configmap', 'kube-root-ca.crt', '-n', 'team-a', '-o', 'json', '--show-managed-fields']).stdout);
  assert.ok(managed.metadata.managedFields.some((m: any) => m.manager === 'kube-controller-manager'), JSON.stringify(managed.metadata.managedFields));
});

test('a pod created right after its namespace gets the default account and its token volume', async () => {
  ok(['create', 'namespace', 'team-b']);
  // the ServiceAccount admission plugin waits briefly for the controller's account
  ok(['run', 'web', '-n', 'team-b', '--image=nginx']);
  const pod = getJSON(['get', 'pod', 'web', '-n', 'team-b']);
  assert.equal(pod.spec.serviceAccountName, 'default');
  const vol = pod.spec.volumes.find((v: any) => v.name.startsWith('kube-api-access-'));
  assert.ok(vol, 'the projected token volume');
  const sources = vol.projected.sources;
  assert.equal(sources[0].serviceAccountToken.path, 'token');
  assert.equal(sources[1].configMap.name, 'kube-root-ca.crt');
  assert.deepEqual(pod.spec.containers[0].volumeMounts, [{ name: vol.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
  assert.deepEqual(
    pod.spec.tolerations.map((t: any) => [t.key, t.tolerationSeconds]),
    [
      ['node.kubernetes.io/not-ready', 300],
      ['node.kubernetes.io/unreachable', 300],
    ],
  );
  // a pod naming an account that does not exist is refused by admission
  const r = kubectl(['run', 'ghost', '-n', 'team-b', '--image=nginx', '--overrides={"spec":{"serviceAccountName":"nobody"}}']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /serviceaccount "nobody" not found/);
});
