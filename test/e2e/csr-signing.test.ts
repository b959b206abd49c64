// The certificate signing controller against a real keelson: an approved request of the
// kube-apiserver-client signer gets a certificate from the cluster CA that kubectl then
// authenticates with; a request its signer refuses fails with SignerValidationFailure; one not
// approved gets nothing. Requests and keys made with openssl.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { startCluster, until, type Cluster } from './harness.js';

let c: Cluster;
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory'] });
});
after(async () => {
  await c?.stop();
});

/** a P-256 key and a PKCS#10 request for `subject` (openssl's -subj form), with optional SANs */
function request(name: string, subject: string, san?: string): { keyFile: string; csrB64: string } {
  const keyFile = join(c.home, `${name}.key`);
  const csrFile = join(c.home, `${name}.csr`);
  const args = ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', subject, '-keyout', keyFile, '-out', csrFile];
  if (san) args.push('-addext', `subjectAltName=${san}`);
  execFileSync('openssl', args, { stdio: 'ignore' });
  return { keyFile, csrB64: readFileSync(csrFile).toString('base64') };
}

async function create(name: string, csrB64: string, signerName: string, usages: string[], extra: Record<string, unknown> = {}): Promise<void> {
  const body = { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name }, spec: { request: csrB64, signerName, usages, ...extra } };
  const r = await c.raw('POST', CSRS, { body });
  assert.equal(r.status, 201, r.text);
}

test('an approved kube-apiserver-client request gets a certificate of the cluster CA, which authenticates its subject', async () => {
  const { keyFile, csrB64 } = request('alice', '/O=dev/CN=alice');
  await create('alice', csrB64, 'kubernetes.io/kube-apiserver-client', ['client auth', 'digital signature'], { expirationSeconds: 3600 });
  const approve = c.kubectl(['certificate', 'approve', 'alice']);
  assert.equal(approve.code, 0, approve.stderr);
  const pem = await until('the certificate', async () => {
    const s = (await c.raw('GET', `${CSRS}/alice`)).json().status;
    return s?.certificate ? Buffer.from(s.certificate, 'base64').toString('utf8') : undefined;
  });
  const cert = new X509Certificate(pem);
  const ca = new X509Certificate(c.credentials.ca);
  assert.ok(cert.verify(ca.publicKey), 'signed by the cluster CA');
  assert.equal(cert.issuer, ca.subject);
  assert.match(cert.subject, /CN=alice/);
  assert.match(cert.subject, /O=dev/);
  assert.equal(cert.ca, false);
  // one hour (short: not shortened by the five minutes of backdating), from five minutes ago
  const life = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 60000;
  assert.ok(Math.abs(life - 65) <= 1, `${cert.validFrom} to ${cert.validTo}`);
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2']);
  // kubectl condition column and the certificate at work
  const get = c.kubectl(['get', 'csr', 'alice']);
  assert.match(get.stdout, /alice\s+\S+\s+kubernetes\.io\/kube-apiserver-client\s+kubernetes-admin\s+60m\s+Approved,Issued/);
  const certFile = c.file('alice.crt', pem);
  const kubeconfig = c.file('alice.kubeconfig', JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'keelson', cluster: { server: c.url, 'certificate-authority-data': c.credentials.ca.toString('base64') } }],
    users: [{ name: 'alice', user: { 'client-certificate': certFile, 'client-key': keyFile } }],
    contexts: [{ name: 'alice', context: { cluster: 'keelson', user: 'alice' } }],
    'current-context': 'alice',
  }));
  const who = c.kubectl(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username} {.status.userInfo.groups}', `--kubeconfig=${kubeconfig}`]);
  assert.equal(who.code, 0, who.stderr);
  assert.match(who.stdout, /^alice \["dev","system:authenticated"\]/);
});

test('a request its signer refuses fails with SignerValidationFailure; one not approved gets nothing', async () => {
  const bad = request('notnode', '/O=dev/CN=system:node:n1', 'DNS:n1.example');
  await create('notnode', bad.csrB64, 'kubernetes.io/kubelet-serving', ['digital signature', 'server auth']);
  assert.equal(c.kubectl(['certificate', 'approve', 'notnode']).code, 0);
  const st = await until('the Failed condition', async () => (await c.raw('GET', `${CSRS}/notnode`)).json().status?.conditions?.find((k: any) => k.type === 'Failed'));
  assert.deepEqual({ status: st.status, reason: st.reason, message: st.message }, { status: 'True', reason: 'SignerValidationFailure', message: 'subject organization is not system:nodes' });

  const good = request('node1', '/O=system:nodes/CN=system:node:n1', 'DNS:n1.example,IP:10.0.0.7');
  await create('node1', good.csrB64, 'kubernetes.io/kubelet-serving', ['digital signature', 'server auth']);
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal((await c.raw('GET', `${CSRS}/node1`)).json().status?.certificate, undefined, 'not approved: not signed');
  assert.equal(c.kubectl(['certificate', 'approve', 'node1']).code, 0);
  const pem = await until('the serving certificate', async () => {
    const s = (await c.raw('GET', `${CSRS}/node1`)).json().status;
    return s?.certificate ? Buffer.from(s.certificate, 'base64').toString('utf8') : undefined;
  });
  const cert = new X509Certificate(pem);
  assert.equal(cert.subjectAltName, 'DNS:n1.example, IP Address:10.0.0.7');
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
  // a year less the backdating by default
  const days = (Date.parse(cert.validTo) - Date.now()) / 86_400_000;
  assert.ok(days > 364 && days <= 365, String(days));
});

test('a node client certificate request is approved when a SubjectAccessReview allows its requester (nodeclient), then signed', async () => {
  const { csrB64 } = request('kubelet-n2', '/O=system:nodes/CN=system:node:n2');
  await create('kubelet-n2', csrB64, 'kubernetes.io/kube-apiserver-client-kubelet', ['digital signature', 'client auth']);
  const st = await until('approved and issued', async () => {
    const s = (await c.raw('GET', `${CSRS}/kubelet-n2`)).json().status;
    return s?.certificate ? s : undefined;
  });
  const approved = st.conditions.find((k: any) => k.type === 'Approved');
  assert.deepEqual({ status: approved.status, reason: approved.reason, message: approved.message }, { status: 'True', reason: 'AutoApproved', message: 'Auto approving kubelet client certificate after SubjectAccessReview.' });
  // a client request that is not a node's is left for a person
  const other = request('notkubelet', '/O=dev/CN=bob');
  await create('notkubelet', other.csrB64, 'kubernetes.io/kube-apiserver-client', ['client auth']);
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal((await c.raw('GET', `${CSRS}/notkubelet`)).json().status?.conditions, undefined);
});
