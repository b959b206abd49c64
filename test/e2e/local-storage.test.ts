// `keelson server --container-runtime-endpoint`: storage out of the box, as k3s' local-storage. The
// default StorageClass local-path (controllers/localpath.ts) and its provisioner, driven through a
// real server with its own node on a private containerd, with kubectl 1.33 and raw HTTP:
// a StatefulSet's class-less claim is provisioned as a directory under
// --default-local-storage-path, the pod writes into it, and deleting the claim deletes the volume
// and the directory; what the provisioner cannot honour gets ProvisioningFailed; the class is made
// again when deleted; --disable=local-storage deletes the class Keelson made, and only that one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { until, KEELSON, ROOT, type Cluster } from './harness.js';
import type { Containerd } from '../nodeagent/containerd.js';
import { startServerNode, getIfExists, type ServerNode } from './servernode.js';

let sn: ServerNode;
let c: Cluster;
let ctd: Containerd;
let dir: string;
/** --default-local-storage-path (made by the provisioner) */
const storage = join(tmpdir(), `keelson-local-storage-volumes-${process.pid}-${Date.now()}`);
const NODE = 'keelson-local-storage-node';
const SC = '/apis/storage.k8s.io/v1/storageclasses';

before(async () => {
  sn = await startServerNode({ node: NODE, args: [`--default-local-storage-path=${storage}`], prefix: 'keelson-local-storage-' });
  ({ c, ctd, dir } = sn);
  await until('the node Ready and schedulable', () => {
    const r = c.kubectl(['get', 'node', NODE, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.spec.taints}']);
    return r.code === 0 && r.stdout === 'True ' ? true : undefined;
  }, 60_000).catch((e) => {
    throw new Error(`${e.message}\n${c.logs.slice(-4000)}`);
  });
});

after(async () => {
  await sn?.stop();
  rmSync(storage, { recursive: true, force: true });
});

function apply(obj: unknown): void {
  const r = c.kubectl(['apply', '-f', '-'], { input: typeof obj === 'string' ? obj : JSON.stringify(obj) });
  assert.equal(r.code, 0, r.stderr);
}

const get = (path: string) => getIfExists(c, path);

/** the events of a claim, as `reason: message` lines */
async function claimEvents(name: string): Promise<string[]> {
  const r = await c.raw('GET', `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(`involvedObject.kind=PersistentVolumeClaim,involvedObject.name=${name}`)}`);
  return r.json().items.map((e: any) => `${e.reason}: ${e.message}`);
}

test('the default StorageClass local-path: Keelson\'s provisioner, WaitForFirstConsumer, Delete, the server\'s node only, made again when deleted', async () => {
  const sc = await until('the local-path class', () => get(`${SC}/local-path`));
  assert.equal(sc.provisioner, 'keelson.io/local-path');
  assert.equal(sc.metadata.annotations['storageclass.kubernetes.io/is-default-class'], 'true');
  assert.equal(sc.metadata.labels['app.kubernetes.io/managed-by'], 'keelson');
  assert.equal(sc.volumeBindingMode, 'WaitForFirstConsumer');
  assert.equal(sc.reclaimPolicy, 'Delete');
  assert.deepEqual(sc.allowedTopologies, [{ matchLabelExpressions: [{ key: 'kubernetes.io/hostname', values: [NODE] }] }]);
  const r = c.kubectl(['get', 'storageclass', '--no-headers']);
  assert.match(r.stdout, /^local-path \(default\)\s+keelson\.io\/local-path\s+Delete\s+WaitForFirstConsumer\s+false\s/);
  // deleted while the server runs: made again (a new uid)
  const del = c.kubectl(['delete', 'storageclass', 'local-path']);
  assert.equal(del.code, 0, del.stderr);
  const again = await until('the class made again', async () => {
    const x = await get(`${SC}/local-path`);
    return x && x.metadata.uid !== sc.metadata.uid ? x : undefined;
  });
  assert.equal(again.provisioner, 'keelson.io/local-path');
});

test('a StatefulSet\'s class-less claim: provisioned on the server\'s node under --default-local-storage-path, Bound, the pod (not root) writes into it; deleting the claim deletes the PV and the directory', async () => {
  apply({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'web' },
    spec: {
      serviceName: 'web',
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          terminationGracePeriodSeconds: 0,
          securityContext: { runAsUser: 1000, runAsGroup: 1000 },
          containers: [{ name: 'c', image: ctd.images.busybox, imagePullPolicy: 'Never', command: ['sh', '-c', 'echo kept > /data/hello && sleep 3600'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
        },
      },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } } }],
    },
  });
  const pod = await until('web-0 Running', async () => {
    const p = await get('/api/v1/namespaces/default/pods/web-0');
    return p?.status?.phase === 'Running' ? p : undefined;
  }, 90_000).catch(async (e) => {
    throw new Error(`${e.message}\n${JSON.stringify(await claimEvents('data-web-0'))}\n${c.logs.slice(-3000)}`);
  });
  assert.equal(pod.spec.nodeName, NODE);
  const claim = await get('/api/v1/namespaces/default/persistentvolumeclaims/data-web-0');
  assert.equal(claim.spec.storageClassName, 'local-path', 'the DefaultStorageClass admission plugin gave the claim the default class');
  assert.equal(claim.status.phase, 'Bound');
  assert.equal(claim.metadata.annotations['volume.kubernetes.io/selected-node'], NODE);
  assert.equal(claim.metadata.annotations['volume.kubernetes.io/storage-provisioner'], 'keelson.io/local-path');
  const uid = claim.metadata.uid;
  const pvName = `pvc-${uid}`;
  assert.equal(claim.spec.volumeName, pvName);
  const pv = await get(`/api/v1/persistentvolumes/${pvName}`);
  const path = join(storage, `pvc-${uid}_default_data-web-0`);
  assert.equal(pv.metadata.annotations['pv.kubernetes.io/provisioned-by'], 'keelson.io/local-path');
  assert.deepEqual(pv.spec.hostPath, { path, type: 'DirectoryOrCreate' });
  assert.deepEqual(pv.spec.nodeAffinity, { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [NODE] }] }] } });
  assert.deepEqual(pv.spec.capacity, { storage: '64Mi' });
  assert.deepEqual(pv.spec.accessModes, ['ReadWriteOnce']);
  assert.equal(pv.spec.volumeMode, 'Filesystem');
  assert.equal(pv.spec.persistentVolumeReclaimPolicy, 'Delete');
  assert.equal(pv.spec.storageClassName, 'local-path');
  assert.deepEqual([pv.spec.claimRef.kind, pv.spec.claimRef.apiVersion, pv.spec.claimRef.namespace, pv.spec.claimRef.name, pv.spec.claimRef.uid], ['PersistentVolumeClaim', 'v1', 'default', 'data-web-0', uid]);
  assert.equal(pv.status.phase, 'Bound');
  assert.equal(statSync(path).mode & 0o777, 0o777, 'every user of the pod may write the directory');
  const written = await until('the pod\'s file on the host', () => (existsSync(join(path, 'hello')) ? readFileSync(join(path, 'hello'), 'utf8') : undefined));
  assert.equal(written, 'kept\n');
  assert.equal(statSync(join(path, 'hello')).uid, 1000);
  const events = await until('ProvisioningSucceeded', async () => {
    const ev = await claimEvents('data-web-0');
    return ev.some((e) => e.startsWith('ProvisioningSucceeded')) ? ev : undefined;
  });
  assert.ok(events.includes('Provisioning: External provisioner is provisioning volume for claim "default/data-web-0"'), events.join('\n'));
  assert.ok(events.includes(`ProvisioningSucceeded: Successfully provisioned volume ${pvName}`), events.join('\n'));
  assert.ok(events.some((e) => e.startsWith("ExternalProvisioning: Waiting for a volume to be created either by the external provisioner 'keelson.io/local-path'")), events.join('\n'));

  // the StatefulSet and its pod go, then the claim (kept by the StatefulSet's Retain policy)
  assert.equal(c.kubectl(['delete', 'statefulset', 'web', '--wait=true']).code, 0);
  assert.equal(c.kubectl(['delete', 'pod', 'web-0', '--ignore-not-found', '--wait=true', '--timeout=60s']).code, 0);
  const del = c.kubectl(['delete', 'pvc', 'data-web-0', '--wait=true', '--timeout=60s']);
  assert.equal(del.code, 0, del.stderr);
  await until('the PV deleted', async () => (await get(`/api/v1/persistentvolumes/${pvName}`)) === undefined, 30_000);
  assert.equal(existsSync(path), false, 'the directory is removed');
  assert.deepEqual(readdirSync(storage), []);
});

test('a volume deleted by hand while its pod runs stays until the claim goes, then its directory goes with it', async () => {
  apply({ apiVersion: 'v1', kind: 'List', items: [
    { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'scratch' }, spec: { accessModes: ['ReadWriteOncePod'], resources: { requests: { storage: '1Mi' } } } },
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'scratch' }, spec: { terminationGracePeriodSeconds: 0, volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'scratch' } }], containers: [{ name: 'c', image: ctd.images.busybox, imagePullPolicy: 'Never', command: ['sh', '-c', 'touch /d/x && sleep 3600'], volumeMounts: [{ name: 'd', mountPath: '/d' }] }] } },
  ] });
  await until('scratch Running', async () => (await get('/api/v1/namespaces/default/pods/scratch'))?.status?.phase === 'Running', 60_000);
  const claim = await get('/api/v1/namespaces/default/persistentvolumeclaims/scratch');
  const pvName = claim.spec.volumeName;
  const path = join(storage, `pvc-${claim.metadata.uid}_default_scratch`);
  assert.equal(pvName, `pvc-${claim.metadata.uid}`);
  assert.deepEqual((await get(`/api/v1/persistentvolumes/${pvName}`)).spec.accessModes, ['ReadWriteOncePod']);
  await until('the pod\'s file', () => existsSync(join(path, 'x')));
  assert.equal(c.kubectl(['delete', 'pv', pvName, '--wait=false']).code, 0);
  const terminating = await get(`/api/v1/persistentvolumes/${pvName}`);
  assert.ok(terminating.metadata.deletionTimestamp, 'kept by pv-protection while bound');
  assert.ok(existsSync(path));
  assert.equal(c.kubectl(['delete', 'pod', 'scratch', '--wait=true', '--timeout=60s']).code, 0);
  assert.equal(c.kubectl(['delete', 'pvc', 'scratch', '--wait=true', '--timeout=60s']).code, 0);
  await until('the PV gone', async () => (await get(`/api/v1/persistentvolumes/${pvName}`)) === undefined, 30_000);
  await until('the directory gone', () => !existsSync(path), 10_000);
});

test('claims the provisioner cannot honour (a selector, ReadWriteMany, volumeMode Block) get ProvisioningFailed and stay Pending, with no volume', async () => {
  const claim = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } }, ...spec } });
  apply({ apiVersion: 'v1', kind: 'List', items: [
    claim('sel', { selector: { matchLabels: { tier: 'db' } } }),
    claim('rwx', { accessModes: ['ReadWriteMany'] }),
    claim('blk', { volumeMode: 'Block' }),
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'user' },
      spec: {
        terminationGracePeriodSeconds: 0,
        volumes: [
          { name: 'a', persistentVolumeClaim: { claimName: 'sel' } },
          { name: 'b', persistentVolumeClaim: { claimName: 'rwx' } },
          { name: 'c', persistentVolumeClaim: { claimName: 'blk' } },
        ],
        containers: [{ name: 'c', image: ctd.images.busybox, imagePullPolicy: 'Never', command: ['sleep', '3600'], volumeMounts: [{ name: 'a', mountPath: '/a' }, { name: 'b', mountPath: '/b' }], volumeDevices: [{ name: 'c', devicePath: '/dev/c' }] }],
      },
    },
  ] });
  const failed = async (name: string) =>
    until(`ProvisioningFailed for ${name}`, async () => (await claimEvents(name)).find((e) => e.startsWith('ProvisioningFailed: ')), 30_000);
  assert.equal(await failed('sel'), 'ProvisioningFailed: claim Selector is not supported');
  assert.match(await failed('rwx'), /^ProvisioningFailed: keelson\.io\/local-path does not support access mode ReadWriteMany/);
  assert.equal(await failed('blk'), 'ProvisioningFailed: keelson.io/local-path does not support block volume provisioning');
  for (const name of ['sel', 'rwx', 'blk']) {
    const pvc = await get(`/api/v1/namespaces/default/persistentvolumeclaims/${name}`);
    assert.equal(pvc.status.phase, 'Pending');
    assert.equal(await get(`/api/v1/persistentvolumes/pvc-${pvc.metadata.uid}`), undefined);
  }
  assert.deepEqual(readdirSync(storage), []);
  assert.equal(c.kubectl(['delete', 'pod', 'user', '--wait=true', '--timeout=60s']).code, 0);
  assert.equal(c.kubectl(['delete', 'pvc', 'sel', 'rwx', 'blk', '--wait=true', '--timeout=60s']).code, 0);
});

test('--disable=local-storage: no provisioner, and the class Keelson made is deleted at the start; a user\'s class of that name stays', async () => {
  assert.ok(await get(`${SC}/local-path`));
  assert.equal(await c.stopProcess(), 0);
  c.logs = '';
  await c.launch(['--disable=local-storage']);
  await until('the class deleted', async () => (await get(`${SC}/local-path`)) === undefined);
  await until('the deletion logged', () => /Deleted the StorageClass of the local-path provisioner/.test(c.logs), 10_000);
  assert.doesNotMatch(c.logs, /Started the local-path provisioner/);
  // a class of that name without Keelson's labels is the user's: neither deleted nor replaced
  apply({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'local-path' }, provisioner: 'keelson.io/local-path', volumeBindingMode: 'WaitForFirstConsumer' });
  const mine = await get(`${SC}/local-path`);
  assert.equal(await c.stopProcess(), 0);
  c.logs = '';
  await c.launch(['--disable=local-storage']);
  // (the class is looked at in the background once the server is ready)
  await until('the user\'s class looked at', () => c.logs.includes('The StorageClass local-path is not the one Keelson made: left as it is'));
  assert.equal((await get(`${SC}/local-path`))?.metadata.uid, mine.metadata.uid);
});

test('the flags: --default-local-storage-path in keelson server\'s help (not keelson apiserver\'s), local-storage a valid --disable item', () => {
  const help = spawnSync(process.execPath, [KEELSON, 'server', '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /--default-local-storage-path string\s+The directory under which the local-path provisioner makes the volumes .*\(default "<data-dir>\/storage"\)/);
  assert.match(help.stdout, /--disable strings\s+.*local-storage \(the local-path provisioner and its default StorageClass local-path\)/);
  const api = spawnSync(process.execPath, [KEELSON, 'apiserver', '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  assert.equal(api.status, 0, api.stderr);
  assert.doesNotMatch(api.stdout, /default-local-storage-path/);
  const bad = spawnSync(process.execPath, [KEELSON, 'server', '--data-dir', join(dir, 'bad'), '--storage-backend=memory', '--disable=local-path'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--disable: invalid value "local-path": valid items are metrics-server, local-storage, coredns, servicelb \(and k3s' traefik, runtimes, which Keelson does not have\)/);
});
