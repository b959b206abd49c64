// The node agent's volumes (nodeagent/volumes.ts) and the environment's API reads
// (nodeagent/envvars.ts) against a real keelson server: a pod bound to a node by spec.nodeName
// (nothing else acts on it; the code under test only reads it), its ConfigMap, Secret and service
// account, and a temporary kubelet root directory. Checked: the files, their modes, the atomic
// writer's layout, a ConfigMap update at the next setUp, the projected service account token and
// its refresh, the kube-api-access volume the admission plugin adds, the CRI mounts of a
// container, the FailedMount and CreateContainerConfigError messages, and tearDown.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCluster, until, type Cluster } from '../e2e/harness.js';
import { loadKubeconfig } from '../../src/client/kubeconfig.js';
import { RESTClient, restConfigFromConnection } from '../../src/client/rest.js';
import { nopLogger } from '../../src/client/log.js';
import { ContainerConfigError, makeEnvironment, type EnvContext } from '../../src/nodeagent/envvars.js';
import { VolumeError, VolumeManager, resolveRecursiveReadOnly } from '../../src/nodeagent/volumes.js';
import { tempDir } from '../tempdir.js';

const NS = 'vols';
const NODE = 'vol-node';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const TS_DIR = /^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\.\d+$/;
const ALLOCATABLE = { cpu: '2', memory: '4Gi', 'ephemeral-storage': '20Gi' };

let c: Cluster;
let client: RESTClient;
let root: string;
let clock = 0;
let vm: VolumeManager;

const api = (method: string, path: string, body?: unknown) => client.json({ method, path, body });

before(async () => {
  // (without the PV binder: the claims here are bound by hand, and the binder, syncing a claim whose
  // volume its cache has not seen yet, would set the claim back to Pending, as Kubernetes' does)
  c = await startCluster({ args: ['--storage-backend=memory', '--controllers=*,-persistentvolume-binder-controller'] });
  client = new RESTClient(restConfigFromConnection(await loadKubeconfig({ explicitPath: c.kubeconfig }), { qps: Infinity }));
  root = tempDir('keelson-kubelet-root-');
  vm = new VolumeManager({ client, rootDir: root, nodeName: NODE, log: nopLogger, nodeAllocatable: async () => ALLOCATABLE, now: () => Date.now() + clock });
  await api('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE } });
  await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await api('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'runner' } });
  await api('POST', `/api/v1/namespaces/${NS}/configmaps`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cfg' },
    data: { a: 'alpha', 'b.txt': 'beta', GREETING: 'hello' },
    binaryData: { bin: Buffer.from([0, 1, 2, 255]).toString('base64') },
  });
  await api('POST', `/api/v1/namespaces/${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sec' }, data: { user: b64('admin'), pass: b64('s3cr3t') } });
  await api('POST', `/api/v1/namespaces/${NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'backend' }, spec: { ports: [{ name: 'http', port: 8080 }] } });
  // the root CA publisher's ConfigMap, which every kube-api-access volume projects
  await until('kube-root-ca.crt', async () => (await client.request({ method: 'GET', path: `/api/v1/namespaces/${NS}/configmaps/kube-root-ca.crt` }).catch(() => undefined))?.status === 200);
});

after(async () => {
  client?.close();
  await c?.stop();
});

function podBody(name: string, spec: any, labels: Record<string, string> = { app: 'vols' }): any {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { nodeName: NODE, serviceAccountName: 'runner', ...spec } };
}

async function createPod(body: any): Promise<any> {
  return api('POST', `/api/v1/namespaces/${NS}/pods`, body);
}

const MAIN = {
  name: 'main',
  image: 'busybox',
  resources: { limits: { cpu: '500m', memory: '128Mi' } },
  env: [
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'USER', valueFrom: { secretKeyRef: { name: 'sec', key: 'user' } } },
    { name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'a' } } },
    { name: 'MISSING_OPTIONAL', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'nope', optional: true } } },
    { name: 'MSG', value: '$(GREETING) $(USER) at $(BACKEND_SERVICE_HOST)' },
  ],
  envFrom: [{ configMapRef: { name: 'cfg' } }, { prefix: 'S_', secretRef: { name: 'sec' } }, { configMapRef: { name: 'absent', optional: true } }],
  volumeMounts: [
    { name: 'cfg', mountPath: '/etc/cfg' },
    { name: 'cfg-items', mountPath: '/etc/items' },
    { name: 'sec', mountPath: '/etc/sec', readOnly: true },
    { name: 'scratch', mountPath: '/scratch' },
    { name: 'scratch', mountPath: '/per-pod', subPathExpr: 'logs/$(POD_NAME)' },
    { name: 'cfg', mountPath: '/etc/a-only', subPath: 'a' },
    { name: 'mem', mountPath: '/mem', mountPropagation: 'HostToContainer' },
    { name: 'host', mountPath: '/host' },
    { name: 'info', mountPath: '/etc/info' },
    { name: 'proj', mountPath: '/etc/proj' },
  ],
};

let hostDir: string;
let pod: any;

test('setUp: configMap, secret, emptyDir, hostPath, downwardAPI, projected and the kube-api-access volume', async () => {
  hostDir = join(tempDir('keelson-hostpath-'), 'made', 'here');
  pod = await createPod(
    podBody('web', {
      containers: [MAIN],
      volumes: [
        { name: 'cfg', configMap: { name: 'cfg' } },
        { name: 'cfg-items', configMap: { name: 'cfg', items: [{ key: 'a', path: 'dir/x', mode: 0o600 }, { key: 'bin', path: 'raw' }] } },
        { name: 'sec', secret: { secretName: 'sec', defaultMode: 0o400 } },
        { name: 'scratch', emptyDir: {} },
        { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } },
        { name: 'host', hostPath: { path: hostDir, type: 'DirectoryOrCreate' } },
        {
          name: 'info',
          downwardAPI: {
            items: [
              { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
              { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
              { path: 'cpu', resourceFieldRef: { containerName: 'main', resource: 'limits.cpu', divisor: '1m' } },
              { path: 'mem', resourceFieldRef: { containerName: 'main', resource: 'requests.memory', divisor: '1Mi' } },
            ],
          },
        },
        {
          name: 'proj',
          projected: {
            defaultMode: 0o440,
            sources: [
              { secret: { name: 'sec', items: [{ key: 'user', path: 'creds/user' }] } },
              { configMap: { name: 'cfg', items: [{ key: 'a', path: 'a' }] } },
              { downwardAPI: { items: [{ path: 'ns', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
              { serviceAccountToken: { path: 'aud-token', audience: 'vault', expirationSeconds: 7200 } },
            ],
          },
        },
        // not mounted by any container: ignored, as by the kubelet
        { name: 'unused', persistentVolumeClaim: { claimName: 'none' } },
      ],
    }),
  );
  const uid: string = pod.metadata.uid;
  const access = pod.spec.volumes.find((v: any) => v.name.startsWith('kube-api-access-'));
  assert.ok(access, 'the admission plugin added the token volume');

  await vm.setUp(pod);
  const podDir = vm.podDir(uid);
  assert.equal(podDir, join(root, 'pods', uid));
  assert.equal(statSync(podDir).mode & 0o777, 0o750);
  const vols = join(podDir, 'volumes');

  // configMap: every key, the atomic writer's layout
  const cfg = join(vols, 'kubernetes.io~configmap', 'cfg');
  assert.equal(statSync(cfg).mode & 0o777, 0o777);
  const data = readlinkSync(join(cfg, '..data'));
  assert.match(data, TS_DIR);
  assert.equal(statSync(join(cfg, data)).mode & 0o777, 0o755);
  for (const k of ['a', 'b.txt', 'GREETING', 'bin']) {
    assert.ok(lstatSync(join(cfg, k)).isSymbolicLink(), k);
    assert.equal(readlinkSync(join(cfg, k)), `..data/${k}`);
    assert.equal(statSync(join(cfg, data, k)).mode & 0o777, 0o644);
  }
  assert.equal(readFileSync(join(cfg, 'a'), 'utf8'), 'alpha');
  assert.deepEqual([...readFileSync(join(cfg, 'bin'))], [0, 1, 2, 255]);
  assert.deepEqual(readdirSync(cfg).sort(), ['..data', data, 'GREETING', 'a', 'b.txt', 'bin'].sort());

  // items: paths with directories, per-item modes, binaryData keys
  const items = join(vols, 'kubernetes.io~configmap', 'cfg-items');
  assert.equal(readlinkSync(join(items, 'dir')), '..data/dir');
  assert.equal(readFileSync(join(items, 'dir', 'x'), 'utf8'), 'alpha');
  assert.equal(statSync(join(items, 'dir', 'x')).mode & 0o777, 0o600);
  assert.deepEqual([...readFileSync(join(items, 'raw'))], [0, 1, 2, 255]);
  assert.ok(!existsSync(join(items, 'a')));

  // secret: decoded, defaultMode
  const sec = join(vols, 'kubernetes.io~secret', 'sec');
  assert.equal(readFileSync(join(sec, 'user'), 'utf8'), 'admin');
  assert.equal(readFileSync(join(sec, 'pass'), 'utf8'), 's3cr3t');
  assert.equal(statSync(join(sec, 'pass')).mode & 0o777, 0o400);

  // emptyDir (Memory is a plain directory here), hostPath DirectoryOrCreate
  assert.equal(statSync(join(vols, 'kubernetes.io~empty-dir', 'scratch')).mode & 0o777, 0o777);
  assert.ok(statSync(join(vols, 'kubernetes.io~empty-dir', 'mem')).isDirectory());
  assert.ok(statSync(hostDir).isDirectory());
  assert.ok(!existsSync(join(vols, 'kubernetes.io~empty-dir', 'unused')));

  // downwardAPI
  const info = join(vols, 'kubernetes.io~downward-api', 'info');
  assert.equal(readFileSync(join(info, 'labels'), 'utf8'), 'app="vols"');
  assert.equal(readFileSync(join(info, 'name'), 'utf8'), 'web');
  assert.equal(readFileSync(join(info, 'cpu'), 'utf8'), '500');
  assert.equal(readFileSync(join(info, 'mem'), 'utf8'), '128'); // requests default to the limits
  assert.equal(statSync(join(info, 'cpu')).mode & 0o777, 0o644);

  // projected: the sources side by side, the projected defaultMode
  const proj = join(vols, 'kubernetes.io~projected', 'proj');
  assert.equal(readFileSync(join(proj, 'creds', 'user'), 'utf8'), 'admin');
  assert.equal(readFileSync(join(proj, 'a'), 'utf8'), 'alpha');
  assert.equal(readFileSync(join(proj, 'ns'), 'utf8'), NS);
  assert.equal(statSync(join(proj, 'ns')).mode & 0o777, 0o440);
  const audPayload = jwtPayload(readFileSync(join(proj, 'aud-token'), 'utf8'));
  assert.deepEqual(audPayload.aud, ['vault']);
  assert.equal(audPayload.exp - audPayload.iat, 7200);

  // the kube-api-access volume: token, CA, namespace
  const sa = join(vols, 'kubernetes.io~projected', access.name);
  const token = readFileSync(join(sa, 'token'), 'utf8');
  const payload = jwtPayload(token);
  assert.equal(payload.sub, `system:serviceaccount:${NS}:runner`);
  assert.equal(payload['kubernetes.io'].namespace, NS);
  assert.deepEqual(payload['kubernetes.io'].pod, { name: 'web', uid });
  assert.equal(payload['kubernetes.io'].serviceaccount.name, 'runner');
  assert.equal(payload['kubernetes.io'].node.name, NODE);
  assert.equal(statSync(join(sa, 'token')).mode & 0o777, 0o644);
  const rootCA = await api('GET', `/api/v1/namespaces/${NS}/configmaps/kube-root-ca.crt`);
  assert.equal(readFileSync(join(sa, 'ca.crt'), 'utf8'), rootCA.data['ca.crt']);
  assert.match(readFileSync(join(sa, 'ca.crt'), 'utf8'), /^-----BEGIN CERTIFICATE-----/);
  assert.equal(readFileSync(join(sa, 'namespace'), 'utf8'), NS);

  // the token authenticates as the service account
  const review = await api('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
  assert.equal(review.status.authenticated, true);
  assert.equal(review.status.user.username, `system:serviceaccount:${NS}:runner`);
});

function jwtPayload(token: string): any {
  const parts = token.split('.');
  assert.equal(parts.length, 3, 'a JWT');
  return JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
}

test('setUp again: nothing rewritten; a ConfigMap update is projected at the next setUp; the token refreshed at 80% of its life', async () => {
  const uid: string = pod.metadata.uid;
  const cfg = join(vm.podDir(uid), 'volumes', 'kubernetes.io~configmap', 'cfg');
  const access = pod.spec.volumes.find((v: any) => v.name.startsWith('kube-api-access-'));
  const sa = join(vm.podDir(uid), 'volumes', 'kubernetes.io~projected', access.name);
  const before = readlinkSync(join(cfg, '..data'));
  const token = readFileSync(join(sa, 'token'), 'utf8');
  // something a container wrote into its emptyDir stays
  writeFileSync(join(vm.podDir(uid), 'volumes', 'kubernetes.io~empty-dir', 'scratch', 'keep'), 'x');

  await vm.setUp(pod);
  assert.equal(readlinkSync(join(cfg, '..data')), before);
  assert.equal(readFileSync(join(sa, 'token'), 'utf8'), token);
  assert.equal(readFileSync(join(vm.podDir(uid), 'volumes', 'kubernetes.io~empty-dir', 'scratch', 'keep'), 'utf8'), 'x');

  await api('PUT', `/api/v1/namespaces/${NS}/configmaps/cfg`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { a: 'alpha2', GREETING: 'hello', c: 'new' }, binaryData: { bin: 'AAEC/w==' } });
  await vm.setUp(pod);
  const after = readlinkSync(join(cfg, '..data'));
  assert.notEqual(after, before);
  assert.match(after, TS_DIR);
  assert.ok(!existsSync(join(cfg, before)), 'the old timestamped directory is removed');
  assert.equal(readFileSync(join(cfg, 'a'), 'utf8'), 'alpha2');
  assert.equal(readFileSync(join(cfg, 'c'), 'utf8'), 'new');
  assert.ok(!existsSync(join(cfg, 'b.txt')) && !lstatSafe(join(cfg, 'b.txt')), 'a removed key loses its symlink');
  assert.deepEqual(readdirSync(cfg).sort(), ['..data', after, 'GREETING', 'a', 'bin', 'c'].sort());
  // the items volume follows too
  assert.equal(readFileSync(join(vm.podDir(uid), 'volumes', 'kubernetes.io~configmap', 'cfg-items', 'dir', 'x'), 'utf8'), 'alpha2');

  // the kube-api-access token (3607 s) is refreshed once 80% of its life passed
  clock = 3000 * 1000;
  try {
    await vm.setUp(pod);
  } finally {
    clock = 0;
  }
  const refreshed = readFileSync(join(sa, 'token'), 'utf8');
  assert.notEqual(refreshed, token);
  assert.equal(jwtPayload(refreshed)['kubernetes.io'].pod.uid, uid);
});

function lstatSafe(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

test('mountsFor: volume mounts, subPath and subPathExpr, read-only volume types, /etc/hosts, the termination message file', async () => {
  const uid: string = pod.metadata.uid;
  const podDir = vm.podDir(uid);
  const main = pod.spec.containers[0];
  const env = await makeEnvironment(pod, main, envCtx());
  const { mounts, terminationMessageHostPath } = await vm.mountsFor(pod, main, env, ['10.1.0.7']);
  const at = (p: string) => mounts.find((m) => m.containerPath === p)!;
  const vols = join(podDir, 'volumes');
  assert.deepEqual(at('/etc/cfg'), { containerPath: '/etc/cfg', hostPath: join(vols, 'kubernetes.io~configmap', 'cfg'), readonly: true, selinuxRelabel: false, propagation: 'PROPAGATION_PRIVATE' });
  assert.equal(at('/etc/sec').readonly, true);
  assert.equal(at('/etc/proj').readonly, true);
  assert.equal(at('/etc/info').readonly, true);
  assert.equal(at('/scratch').readonly, false);
  assert.equal(at('/host').hostPath, hostDir);
  assert.equal(at('/mem').propagation, 'PROPAGATION_HOST_TO_CONTAINER');
  // subPathExpr: made in the volume, with the volume's mode
  const perPod = join(vols, 'kubernetes.io~empty-dir', 'scratch', 'logs', 'web');
  assert.equal(at('/per-pod').hostPath, perPod);
  assert.equal(statSync(perPod).mode & 0o777, 0o777);
  // subPath of a ConfigMap key: the file itself (as the kubelet's bind mount of it)
  const aOnly = at('/etc/a-only').hostPath;
  assert.ok(aOnly.startsWith(join(vols, 'kubernetes.io~configmap', 'cfg', '..')), aOnly);
  assert.equal(readFileSync(aOnly, 'utf8'), 'alpha2');
  // the token volume the admission plugin mounted
  assert.equal(at('/var/run/secrets/kubernetes.io/serviceaccount').readonly, true);

  const hosts = at('/etc/hosts');
  assert.equal(hosts.hostPath, join(podDir, 'etc-hosts'));
  assert.equal(hosts.readonly, false);
  assert.equal(
    readFileSync(hosts.hostPath, 'utf8'),
    '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n10.1.0.7\tweb\n',
  );

  assert.ok(terminationMessageHostPath);
  assert.match(terminationMessageHostPath!, new RegExp(`^${podDir}/containers/main/[0-9a-f]{8}$`));
  assert.equal(statSync(terminationMessageHostPath!).mode & 0o777, 0o666);
  assert.equal(at('/dev/termination-log').hostPath, terminationMessageHostPath);
  assert.equal(mounts[mounts.length - 1]!.containerPath, '/dev/termination-log');
  // a new file at each start
  const again = await vm.mountsFor(pod, main, env, ['10.1.0.7']);
  assert.notEqual(again.terminationMessageHostPath, terminationMessageHostPath);

  // no pod IP yet: no /etc/hosts; a subPathExpr with an unset variable fails
  const early = await vm.mountsFor(pod, main, env, []);
  assert.ok(!early.mounts.some((m) => m.containerPath === '/etc/hosts'));
  await assert.rejects(vm.mountsFor(pod, main, [], ['10.1.0.7']), (e: unknown) => e instanceof ContainerConfigError && e.message === 'missing value for POD_NAME');
  const escape = { ...main, volumeMounts: [{ name: 'scratch', mountPath: '/x', subPath: '../../etc' }] };
  await assert.rejects(vm.mountsFor(pod, escape, env, []), { message: "unable to provision SubPath `../../etc`: must not contain '..'" });
  const abs = { ...main, volumeMounts: [{ name: 'scratch', mountPath: '/x', subPath: '/etc' }] };
  await assert.rejects(vm.mountsFor(pod, abs, env, []), { message: 'error SubPath `/etc` must not be an absolute path' });
  const unknown = { ...main, volumeMounts: [{ name: 'nope', mountPath: '/x' }] };
  await assert.rejects(vm.mountsFor(pod, unknown, env, []), { message: 'cannot find volume "nope" to mount into container "main"' });
});

test('/etc/hosts of a pod with a subdomain and host aliases', async () => {
  const p = await createPod(
    podBody('named', {
      hostname: 'db-0',
      subdomain: 'db',
      hostAliases: [{ ip: '10.9.9.9', hostnames: ['foo.local', 'bar.local'] }],
      containers: [{ name: 'c', image: 'busybox', terminationMessagePath: '/tmp/msg' }],
    }),
  );
  await vm.setUp(p);
  const { mounts } = await vm.mountsFor(p, p.spec.containers[0], [], ['10.1.0.8', 'fd00::8']);
  const hosts = readFileSync(join(vm.podDir(p.metadata.uid), 'etc-hosts'), 'utf8');
  assert.ok(hosts.endsWith(`10.1.0.8\tdb-0.db.${NS}.svc.cluster.local\tdb-0\nfd00::8\tdb-0.db.${NS}.svc.cluster.local\tdb-0\n\n# Entries added by HostAliases.\n10.9.9.9\tfoo.local\tbar.local\n`), hosts);
  assert.ok(mounts.some((m) => m.containerPath === '/tmp/msg'));
  await vm.tearDown(p.metadata.uid);
});

function envCtx(): EnvContext {
  return { client, nodeName: NODE, hostIPs: ['192.168.7.1'], podIPs: ['10.1.0.7'], nodeAllocatable: ALLOCATABLE };
}

test('makeEnvironment through the API: envFrom, configMapKeyRef, secretKeyRef, services, and the kubelet messages', async () => {
  const env = await makeEnvironment(pod, pod.spec.containers[0], envCtx());
  const get = (n: string) => env.find((e) => e.name === n)?.value;
  assert.equal(get('POD_NAME'), 'web');
  assert.equal(get('USER'), 'admin');
  assert.equal(get('A'), 'alpha2');
  assert.equal(get('GREETING'), 'hello');
  assert.equal(get('c'), 'new');
  assert.equal(get('S_pass'), 's3cr3t');
  assert.equal(get('MISSING_OPTIONAL'), undefined);
  const backend = await api('GET', `/api/v1/namespaces/${NS}/services/backend`);
  assert.equal(get('MSG'), `hello admin at ${backend.spec.clusterIP}`);
  assert.equal(get('BACKEND_SERVICE_PORT_HTTP'), '8080');
  const kubernetes = await api('GET', '/api/v1/namespaces/default/services/kubernetes');
  assert.equal(get('KUBERNETES_SERVICE_HOST'), kubernetes.spec.clusterIP);
  assert.equal(get('KUBERNETES_SERVICE_PORT'), String(kubernetes.spec.ports[0].port));

  const fails = async (c: any, message: string) =>
    assert.rejects(makeEnvironment(pod, { name: 'x', ...c }, envCtx()), (e: unknown) => {
      assert.ok(e instanceof ContainerConfigError, String(e));
      assert.equal((e as Error).message, message);
      return true;
    });
  await fails({ envFrom: [{ configMapRef: { name: 'absent' } }] }, 'configmap "absent" not found');
  await fails({ envFrom: [{ secretRef: { name: 'absent' } }] }, 'secret "absent" not found');
  await fails({ env: [{ name: 'K', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k' } } }] }, `couldn't find key k in ConfigMap ${NS}/cfg`);
  await fails({ env: [{ name: 'K', valueFrom: { secretKeyRef: { name: 'sec', key: 'k' } } }] }, `couldn't find key k in Secret ${NS}/sec`);
  await fails({ env: [{ name: 'K', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }, 'secret "s" not found');
  const optional = await makeEnvironment(pod, { name: 'x', env: [{ name: 'K', valueFrom: { secretKeyRef: { name: 's', key: 'k', optional: true } } }] }, envCtx());
  assert.ok(!optional.some((e) => e.name === 'K'));
});

test('setUp failures: the FailedMount messages of a missing ConfigMap, a missing key, a missing claim, a hostPath check and an unsupported type', async () => {
  const file = join(tempDir('keelson-hostpath-'), 'plain');
  writeFileSync(file, '');
  const p = await createPod(
    podBody('broken', {
      containers: [
        {
          name: 'c',
          image: 'busybox',
          volumeMounts: [
            { name: 'cfg', mountPath: '/a' },
            { name: 'key', mountPath: '/b' },
            { name: 'data', mountPath: '/c' },
            { name: 'dir', mountPath: '/d' },
            { name: 'opt', mountPath: '/e' },
            { name: 'ok', mountPath: '/f' },
            { name: 'eph', mountPath: '/g' },
            { name: 'csi', mountPath: '/h' },
          ],
        },
      ],
      volumes: [
        { name: 'cfg', configMap: { name: 'missing' } },
        { name: 'key', secret: { secretName: 'sec', items: [{ key: 'nope', path: 'x' }] } },
        { name: 'data', persistentVolumeClaim: { claimName: 'claim' } },
        { name: 'dir', hostPath: { path: file, type: 'Directory' } },
        { name: 'opt', configMap: { name: 'missing', optional: true } },
        { name: 'ok', emptyDir: {} },
        { name: 'eph', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } },
        { name: 'csi', csi: { driver: 'csi.example.com' } },
      ],
    }),
  );
  await assert.rejects(vm.setUp(p), (e: unknown) => {
    assert.ok(e instanceof VolumeError);
    assert.equal(e.reason, 'FailedMount');
    // (the claims fail in the populator: WaitForAttachAndMount's message, naming every volume not
    // mounted; the ephemeral volume's claim is `<pod>-<volume>`)
    const unable = `Unable to attach or mount volumes: unmounted volumes=[cfg csi data dir eph key], unattached volumes=[], failed to process volumes=[data eph]: error processing PVC ${NS}/broken-eph: failed to fetch PVC from API server: persistentvolumeclaims "broken-eph" not found; error processing PVC ${NS}/claim: failed to fetch PVC from API server: persistentvolumeclaims "claim" not found`;
    assert.equal(e.message, unable);
    assert.deepEqual(e.messages, [
      unable,
      'MountVolume.SetUp failed for volume "cfg" : configmap "missing" not found',
      'MountVolume.SetUp failed for volume "key" : references non-existent secret key: nope',
      `MountVolume.SetUp failed for volume "dir" : hostPath type check failed: ${file} is not a directory`,
      `MountVolume.SetUp failed for volume "csi" : Keelson's kubelet does not support csi volumes`,
    ]);
    return true;
  });
  // the volumes that could be set up were
  const dir = vm.podDir(p.metadata.uid);
  assert.ok(statSync(join(dir, 'volumes', 'kubernetes.io~empty-dir', 'ok')).isDirectory());
  const opt = join(dir, 'volumes', 'kubernetes.io~configmap', 'opt');
  assert.deepEqual(readdirSync(opt).filter((n) => !TS_DIR.test(n)), ['..data']);

  const q = await createPod(
    podBody('broken-projection', {
      containers: [{ name: 'c', image: 'busybox', volumeMounts: [{ name: 'p', mountPath: '/p' }] }],
      volumes: [{ name: 'p', projected: { sources: [{ configMap: { name: 'missing' } }, { secret: { name: 'gone' } }] } }],
    }),
  );
  await assert.rejects(vm.setUp(q), { message: 'MountVolume.SetUp failed for volume "p" : [configmap "missing" not found, secret "gone" not found]' });
  await vm.tearDown(q.metadata.uid);
  await vm.tearDown(p.metadata.uid);
});

test('fsGroup: the group owns the volumes, and the token is 0640', async () => {
  const p = await createPod(
    podBody('grouped', {
      securityContext: { fsGroup: 2345, runAsUser: 1000 },
      containers: [{ name: 'c', image: 'busybox', volumeMounts: [{ name: 'scratch', mountPath: '/s' }, { name: 'cfg', mountPath: '/cfg' }] }],
      volumes: [
        { name: 'scratch', emptyDir: {} },
        { name: 'cfg', configMap: { name: 'cfg' } },
      ],
    }),
  );
  await vm.setUp(p);
  const vols = join(vm.podDir(p.metadata.uid), 'volumes');
  const scratch = statSync(join(vols, 'kubernetes.io~empty-dir', 'scratch'));
  assert.equal(scratch.gid, 2345);
  assert.equal(scratch.mode & 0o7777, 0o2777);
  const a = statSync(join(vols, 'kubernetes.io~configmap', 'cfg', 'a'));
  assert.equal(a.gid, 2345);
  assert.equal(a.mode & 0o777, 0o644);
  const access = p.spec.volumes.find((v: any) => v.name.startsWith('kube-api-access-'));
  const token = statSync(join(vols, 'kubernetes.io~projected', access.name, 'token'));
  assert.equal(token.mode & 0o777, 0o640);
  assert.equal(token.uid, 1000);
  assert.equal(token.gid, 2345);
  await vm.tearDown(p.metadata.uid);
});

test('tearDown removes the pod directory', async () => {
  const dir = vm.podDir(pod.metadata.uid);
  assert.ok(existsSync(dir));
  await vm.tearDown(pod.metadata.uid);
  assert.ok(!existsSync(dir));
  // the hostPath volume is the node's: left alone
  assert.ok(existsSync(hostDir));
  // idempotent
  await vm.tearDown(pod.metadata.uid);
});

test('resolveRecursiveReadOnly: the kubelet\'s modes and errors', () => {
  const m = (o: Record<string, unknown>) => ({ name: 'v', mountPath: '/x', readOnly: true, ...o });
  assert.equal(resolveRecursiveReadOnly(m({}), true), false);
  assert.equal(resolveRecursiveReadOnly(m({ recursiveReadOnly: 'Disabled' }), true), false);
  assert.equal(resolveRecursiveReadOnly(m({ recursiveReadOnly: 'IfPossible' }), true), true);
  assert.equal(resolveRecursiveReadOnly(m({ recursiveReadOnly: 'IfPossible' }), false), false);
  assert.equal(resolveRecursiveReadOnly(m({ recursiveReadOnly: 'Enabled', mountPropagation: 'None' }), true), true);
  assert.throws(() => resolveRecursiveReadOnly(m({ recursiveReadOnly: 'Enabled' }), false), { message: 'volume "v" requested recursive read-only mode, but it is not supported by the runtime' });
  assert.throws(() => resolveRecursiveReadOnly(m({ recursiveReadOnly: 'Enabled', readOnly: false }), true), { message: 'volume "v" requested recursive read-only mode, but it is not read-only' });
  assert.throws(() => resolveRecursiveReadOnly(m({ recursiveReadOnly: 'IfPossible', mountPropagation: 'HostToContainer' }), true), { message: 'volume "v" requested recursive read-only mode, but it is not compatible with propagation "HostToContainer"' });
  assert.throws(() => resolveRecursiveReadOnly(m({ recursiveReadOnly: 'Sometimes' }), true), { message: 'unknown recursive read-only mode "Sometimes"' });
});

test('persistentVolumeClaim: a bound claim mounts its hostPath PV (read-only when the claim says so); ReadWriteOncePod holds it for one pod; a claim in volumeDevices is refused', async () => {
  const dir = tempDir('keelson-pv-');
  const bind = async (name: string, accessModes: string[], volumeMode?: string) => {
    const pvc = await api('POST', `/api/v1/namespaces/${NS}/persistentvolumeclaims`, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes, storageClassName: '', volumeName: name, resources: { requests: { storage: '1Gi' } }, ...(volumeMode ? { volumeMode } : {}) } });
    await api('POST', '/api/v1/persistentvolumes', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name }, spec: { capacity: { storage: '1Gi' }, accessModes, storageClassName: '', hostPath: { path: dir }, ...(volumeMode ? { volumeMode } : {}), claimRef: { namespace: NS, name, uid: pvc.metadata.uid } } });
    await client.json({ method: 'PATCH', path: `/api/v1/namespaces/${NS}/persistentvolumeclaims/${name}/status`, contentType: 'application/merge-patch+json', body: { status: { phase: 'Bound' } } });
  };
  await bind('shared', ['ReadWriteOnce']);
  await bind('solo', ['ReadWriteOncePod']);
  await bind('raw', ['ReadWriteOnce'], 'Block');
  const usePod = (name: string, claimName: string, readOnly = false, device = false) =>
    createPod(podBody(name, { containers: [{ name: 'c', image: 'busybox', ...(device ? { volumeDevices: [{ name: 'data', devicePath: '/dev/xvda' }] } : { volumeMounts: [{ name: 'data', mountPath: '/data' }] }) }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName, readOnly } }] }));
  const rw = await usePod('pvc-rw', 'shared');
  const ro = await usePod('pvc-ro', 'shared', true);
  for (const p of [rw, ro]) await vm.setUp(p);
  const mount = async (p: any) => (await vm.mountsFor(p, p.spec.containers[0], [], [])).mounts.find((m) => m.containerPath === '/data');
  assert.deepEqual([(await mount(rw))?.hostPath, (await mount(rw))?.readonly], [dir, false]);
  assert.deepEqual([(await mount(ro))?.hostPath, (await mount(ro))?.readonly], [dir, true]);
  // ReadWriteOncePod: a second pod of the node waits until the first's volumes are torn down
  const first = await usePod('pvc-solo-1', 'solo');
  const second = await usePod('pvc-solo-2', 'solo');
  await vm.setUp(first);
  await assert.rejects(vm.setUp(second), (e: unknown) => e instanceof VolumeError && e.message === 'MountVolume.SetUp failed for volume "solo" : volume uses the ReadWriteOncePod access mode and is already in use by another pod');
  await vm.tearDown(first.metadata.uid);
  await vm.setUp(second);
  // a Block claim mounted is a volume-mode error of the populator; mapped as a device, Keelson refuses it
  const mounted = await usePod('pvc-raw-mount', 'raw');
  await assert.rejects(vm.setUp(mounted), (e: unknown) => e instanceof VolumeError && e.message.endsWith('failed to process volumes=[data]: volume data has volumeMode Block, but is specified in volumeMounts'));
  const mapped = await usePod('pvc-raw-map', 'raw', false, true);
  await assert.rejects(vm.setUp(mapped), (e: unknown) => e instanceof VolumeError && e.message === `MapVolume.SetUpDevice failed for volume "raw" : Keelson's kubelet does not support block volumes (volumeDevices)`);
  for (const p of [rw, ro, second, mounted, mapped]) await vm.tearDown(p.metadata.uid);
});
