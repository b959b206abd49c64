// The kubelet's certificate managers (src/nodeagent/certmanager.ts) against a real keelson
// server, without a runtime: its requests as a node (system:node:<name>), approved here as an
// administrator would, signed by the server's signing controller; a certificate kept in --cert-dir
// is used at the next start; and a renewal (here at once, where the kubelet waits for 70 to 90% of
// the certificate's life) asks again and serves the new certificate; and the client certificate's
// rotation, with which the node's clients change over. The whole kubelet with the serving
// certificate is in kubelet.test.ts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, until, type Cluster } from './harness.js';
import { issueClientCert, loadCA } from '../../src/apiserver/pki.js';
import { nopLogger } from '../../src/client/log.js';
import { CertificateManager } from '../../src/nodeagent/certmanager.js';
import { RESTClient, RotatingClientCert, type RESTConfig } from '../../src/client/rest.js';
import { writeCurrentPair } from '../../src/nodeagent/bootstrap.js';

let c: Cluster;
let dir: string;
let rest: RESTConfig;
let approving = true;
let approver: Promise<void> | undefined;
const NODE = 'cert-node';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-servercert-'));
  c = await startCluster({ args: ['--storage-backend=memory'] });
  const pki = join(c.dataDir, 'pki');
  const ca = loadCA(readFileSync(join(pki, 'ca.crt'), 'utf8'), readFileSync(join(pki, 'ca.key'), 'utf8'));
  const node = await issueClientCert(ca, `system:node:${NODE}`, ['system:nodes']);
  rest = { server: c.url, ca: ca.certPEM, cert: node.certPEM, key: node.keyPEM } as RESTConfig;
  // the administrator: every pending kubelet-serving request is approved
  approver = (async () => {
    while (approving) {
      const l = (await c.raw('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests')).json();
      for (const x of l.items ?? []) {
        if (x.spec.signerName !== 'kubernetes.io/kubelet-serving' || x.status?.conditions?.length) continue;
        x.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'TestApproved', message: 'approved by the test' }] };
        await c.raw('PUT', `/apis/certificates.k8s.io/v1/certificatesigningrequests/${x.metadata.name}/approval`, { body: x });
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
});

after(async () => {
  approving = false;
  await approver;
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function manager(served: X509Certificate[], renewAt?: () => number): CertificateManager {
  return new CertificateManager({
    kind: 'server',
    rest,
    nodeName: NODE,
    certDir: dir,
    hostnames: [NODE],
    ips: ['127.0.0.1'],
    log: nopLogger,
    use: (certPEM, keyPEM) => {
      assert.match(keyPEM, /PRIVATE KEY/);
      served.push(new X509Certificate(certPEM));
    },
    renewAt,
  });
}

test('a certificate is requested as the node, issued once approved, kept in the cert dir and served', async () => {
  const served: X509Certificate[] = [];
  const m = manager(served);
  m.start();
  try {
    const cert = await until('a certificate served', async () => served[0], 30_000);
    assert.match(cert.subject, /CN=system:node:cert-node/);
    assert.match(cert.subjectAltName ?? '', /DNS:cert-node/);
    assert.match(cert.subjectAltName ?? '', /IP Address:127\.0\.0\.1/);
    const ca = new X509Certificate(readFileSync(join(c.dataDir, 'pki', 'ca.crt')));
    assert.ok(cert.verify(ca.publicKey), 'signed by the cluster CA');
    const l = (await c.raw('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests')).json();
    const csr = l.items.find((x: any) => x.spec.signerName === 'kubernetes.io/kubelet-serving');
    assert.equal(csr.spec.username, `system:node:${NODE}`);
    assert.match(readlinkSync(join(dir, 'kubelet-server-current.pem')), /kubelet-server-\d{8}-\d{6}\.pem$/);
  } finally {
    await m.stop();
  }
  // a new manager (the kubelet restarted) uses the kept certificate without asking again
  const before = (await c.raw('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests')).json().items.length;
  const again: X509Certificate[] = [];
  const m2 = manager(again);
  m2.start();
  await m2.stop();
  assert.equal(again.length, 1);
  assert.equal(again[0]!.serialNumber, served[0]!.serialNumber);
  assert.equal((await c.raw('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests')).json().items.length, before);
});

test('renewal: past the renewal point a new certificate is requested and served', async () => {
  const served: X509Certificate[] = [];
  // (the kept certificate's renewal point is at once)
  const m = manager(served, () => 0);
  m.start();
  try {
    await until('a renewed certificate served', async () => (served.length >= 2 ? served : undefined), 30_000);
    assert.notEqual(served[1]!.serialNumber, served[0]!.serialNumber);
  } finally {
    await m.stop();
  }
});

test('--rotate-certificates: the client certificate is renewed with the current one (approved by the approving controller) and every client changes over', async () => {
  // nodes may have their own renewals approved, as kubeadm sets a cluster up (kube-apiserver's
  // bootstrap policy has the ClusterRole, not the binding)
  const crb = await c.raw('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'kubeadm:node-autoapprove-certificate-rotation' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:nodes' }],
    },
  });
  assert.equal(crb.status, 201, crb.text);
  // the layout the bootstrap leaves: <cert-dir>/kubelet-client-current.pem, the kubeconfig naming it
  const clientDir = join(dir, 'client');
  const pki = join(c.dataDir, 'pki');
  const ca = loadCA(readFileSync(join(pki, 'ca.crt'), 'utf8'), readFileSync(join(pki, 'ca.key'), 'utf8'));
  const first = await issueClientCert(ca, `system:node:${NODE}`, ['system:nodes']);
  writeCurrentPair(clientDir, 'kubelet-client', first.certPEM, first.keyPEM);
  const source = new RotatingClientCert(first.certPEM, first.keyPEM);
  const nodeRest: RESTConfig = { server: c.url, ca: ca.certPEM, certSource: source };
  const client = new RESTClient(nodeRest);
  const whoami = async () => {
    const r = await client.json<any>({ method: 'POST', path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
    return { name: r.status.userInfo.username as string, credential: (r.status.userInfo.extra?.['authentication.kubernetes.io/credential-id'] ?? [])[0] as string };
  };
  const fingerprint = (pem: string) => `X509SHA256=${new X509Certificate(pem).fingerprint256.replace(/:/g, '').toLowerCase()}`;
  assert.deepEqual(await whoami(), { name: `system:node:${NODE}`, credential: fingerprint(first.certPEM) });
  const used: X509Certificate[] = [];
  let round = 0;
  const m = new CertificateManager({
    kind: 'client',
    rest: nodeRest,
    nodeName: NODE,
    certDir: clientDir,
    log: nopLogger,
    use: (cert, key) => {
      used.push(new X509Certificate(cert));
      source.set(cert, key);
    },
    // (the kept certificate is renewed at once, the renewed one not again)
    renewAt: () => (round++ === 0 ? 0 : 0.9),
  });
  m.start();
  try {
    const renewed = await until('a renewed client certificate', async () => used.find((x) => x.serialNumber !== new X509Certificate(first.certPEM).serialNumber), 30_000).catch(async (e) => {
      const l = (await c.raw('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests')).json();
      throw new Error(`${e.message}; the requests: ${JSON.stringify(l.items.map((x: any) => [x.spec.signerName, x.spec.username, x.status]))}`);
    });
    assert.match(renewed.subject, /CN=system:node:cert-node/);
    const csr = (await c.raw('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests')).json().items.find((x: any) => x.spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet');
    assert.equal(csr.spec.username, `system:node:${NODE}`, 'asked for with the current certificate');
    assert.equal(csr.status.conditions[0].reason, 'AutoApproved');
    // the same client now presents the new certificate
    assert.deepEqual(await whoami(), { name: `system:node:${NODE}`, credential: fingerprint(renewed.toString()) });
    assert.equal(readFileSync(join(clientDir, 'kubelet-client-current.pem'), 'utf8').includes(renewed.toString().trim()), true, 'kept as the current pair');
  } finally {
    await m.stop();
    client.close();
  }
});
