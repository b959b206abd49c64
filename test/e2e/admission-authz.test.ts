// The admission plugins that ask the authorizer (kube-apiserver 1.33), end to end with
// `--authorization-mode=RBAC` and token users: CertificateApproval through `kubectl certificate
// approve` (kubectl 1.33), CertificateSigning through a raw status update, and
// OwnerReferencesPermissionEnforcement enabled with --enable-admission-plugins.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, until, type Cluster, type RawResponse } from './harness.js';

let c: Cluster;
let tokenDir: string;
const ALICE_TOKEN = 'alice-token-0123456789';
let aliceConfig: string;

function openssl(args: string[]): string {
  const r = spawnSync('openssl', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const csrPEM = (cn: string) => openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', '/dev/null', '-subj', `/CN=${cn}`]);
const certPEM = (cn: string) => openssl(['req', '-x509', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', '/dev/null', '-subj', `/CN=${cn}`, '-days', '1']);

function admin(args: string[], input?: string): string {
  const r = c.kubectl(args, { input });
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function alice(args: string[], input?: string) {
  return c.kubectl(args, { input, env: { KUBECONFIG: aliceConfig }, version: '1.33' });
}

function asAlice(method: string, path: string, body?: object): Promise<RawResponse> {
  const headers: Record<string, string> = { authorization: `Bearer ${ALICE_TOKEN}` };
  if (body) headers['content-type'] = 'application/json';
  return c.rawNoAuth(method, path, { headers, body: body ? JSON.stringify(body) : undefined });
}

const canI = (args: string[]) => alice(['auth', 'can-i', ...args]).stdout.trim() === 'yes';

/** a ClusterRole on signers (a resource kubectl create clusterrole does not know: it is not served) */
function signerRole(name: string, verb: string, signer: string): void {
  admin(['create', '-f', '-'], JSON.stringify({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name },
    rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['signers'], verbs: [verb], resourceNames: [signer] }],
  }));
}

function createCSR(name: string, signerName: string, usages: string[]): void {
  admin(['create', '-f', '-'], JSON.stringify({
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { signerName, usages, request: Buffer.from(csrPEM(name)).toString('base64') },
  }));
}

before(async () => {
  tokenDir = mkdtempSync(join(tmpdir(), 'keelson-admission-authz-'));
  const tokenFile = join(tokenDir, 'tokens.csv');
  writeFileSync(tokenFile, `${ALICE_TOKEN},alice,alice-uid,"dev"\n`);
  c = await startCluster({ args: ['--authorization-mode=RBAC', `--token-auth-file=${tokenFile}`, '--enable-admission-plugins=OwnerReferencesPermissionEnforcement'] });
  aliceConfig = c.tokenKubeconfig('alice', ALICE_TOKEN);
  // alice may read CSRs and update their approval and status, but holds no signer permission
  admin(['create', 'clusterrole', 'csr-handler', '--verb=get,list,watch', '--resource=certificatesigningrequests']);
  admin(['patch', 'clusterrole', 'csr-handler', '--type=json', '-p', JSON.stringify([
    { op: 'add', path: '/rules/-', value: { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests/approval', 'certificatesigningrequests/status'], verbs: ['update', 'patch'] } },
  ])]);
  admin(['create', 'clusterrolebinding', 'alice-csr-handler', '--clusterrole=csr-handler', '--user=alice']);
  admin(['create', 'namespace', 'team']);
  await until('alice bound', () => canI(['update', 'certificatesigningrequests', '--subresource=approval']));
});

after(async () => {
  await c?.stop();
  rmSync(tokenDir, { recursive: true, force: true });
});

test('CertificateApproval: kubectl certificate approve needs approve on the signer', async () => {
  const signer = 'kubernetes.io/kube-apiserver-client';
  createCSR('alice-client', signer, ['client auth']);
  const r = alice(['certificate', 'approve', 'alice-client']);
  assert.notEqual(r.code, 0, r.stdout);
  assert.ok(
    r.stderr.includes(`certificatesigningrequests.certificates.k8s.io "alice-client" is forbidden: user not permitted to approve requests with signerName "${signer}"`),
    r.stderr,
  );
  const csr = JSON.parse(admin(['get', 'csr', 'alice-client', '-o', 'json']));
  assert.equal(csr.status.conditions, undefined, 'nothing was approved');
  // a merge patch of the approval subresource is refused alike
  const patched = await c.rawNoAuth('PATCH', '/apis/certificates.k8s.io/v1/certificatesigningrequests/alice-client/approval', {
    headers: { authorization: `Bearer ${ALICE_TOKEN}`, 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Patch', message: 'by patch' }] } }),
  });
  assert.equal(patched.status, 403, patched.text);
  assert.equal(patched.json().message, `certificatesigningrequests.certificates.k8s.io "alice-client" is forbidden: user not permitted to approve requests with signerName "${signer}"`);

  signerRole('client-approver', 'approve', signer);
  admin(['create', 'clusterrolebinding', 'alice-client-approver', '--clusterrole=client-approver', '--user=alice']);
  // the binding reaches the authorizer through the watch caches
  const ok = await until('approve granted', () => {
    const r = alice(['certificate', 'approve', 'alice-client']);
    return r.code === 0 ? r : undefined;
  });
  assert.match(ok.stdout, /certificatesigningrequest.certificates.k8s.io\/alice-client approved/);
  const after = JSON.parse(admin(['get', 'csr', 'alice-client', '-o', 'json']));
  assert.ok(after.status.conditions.some((x: any) => x.type === 'Approved' && x.status === 'True'));
  // denying is an approval-subresource update as well, and so allowed now
  createCSR('alice-client-2', signer, ['client auth']);
  createCSR('alice-client-3', signer, ['client auth']);
  const deny = alice(['certificate', 'deny', 'alice-client-3']);
  assert.equal(deny.code, 0, deny.stderr);
  // a patch of the approval changes the conditions of the status, and the metadata
  // (csrApprovalStrategy resets spec and the rest of status only)
  const denyPatch = await c.rawNoAuth('PATCH', '/apis/certificates.k8s.io/v1/certificatesigningrequests/alice-client-2/approval', {
    headers: { authorization: `Bearer ${ALICE_TOKEN}`, 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ metadata: { labels: { kept: 'yes' } }, spec: { usages: ['server auth'] }, status: { conditions: [{ type: 'Denied', status: 'True', reason: 'Patch', message: 'by patch' }] } }),
  });
  assert.equal(denyPatch.status, 200, denyPatch.text);
  const denied = denyPatch.json();
  assert.equal(denied.status.conditions[0].reason, 'Patch');
  assert.ok(denied.status.conditions[0].lastUpdateTime);
  assert.deepEqual(denied.metadata.labels, { kept: 'yes' });
  assert.deepEqual(denied.spec.usages, ['client auth']);
  // another signer's request is still refused
  createCSR('other-signer', 'example.com/other', ['digital signature']);
  const other = alice(['certificate', 'approve', 'other-signer']);
  assert.notEqual(other.code, 0);
  assert.ok(other.stderr.includes('user not permitted to approve requests with signerName "example.com/other"'), other.stderr);
});

test('CertificateSigning: setting status.certificate needs sign on the signer', async () => {
  const signer = 'example.com/signer';
  createCSR('to-sign', signer, ['digital signature']);
  admin(['certificate', 'approve', 'to-sign']);
  const path = '/apis/certificates.k8s.io/v1/certificatesigningrequests/to-sign/status';
  const cur = (await asAlice('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests/to-sign')).json();
  cur.status.certificate = Buffer.from(certPEM('to-sign')).toString('base64');
  const r = await asAlice('PUT', path, cur);
  assert.equal(r.status, 403, r.text);
  const st = r.json();
  assert.equal(st.reason, 'Forbidden');
  assert.equal(st.message, `certificatesigningrequests.certificates.k8s.io "to-sign" is forbidden: user not permitted to sign requests with signerName "${signer}"`);
  // a status update that leaves the certificate alone is not a signature
  const failed = (await asAlice('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests/to-sign')).json();
  failed.status.conditions.push({ type: 'Failed', status: 'True', reason: 'Test', message: 'not signing yet' });
  const f = await asAlice('PUT', path, failed);
  assert.equal(f.status, 200, f.text);

  // the wildcard form <domain>/* grants every signer of the domain
  signerRole('example-signer', 'sign', 'example.com/*');
  admin(['create', 'clusterrolebinding', 'alice-example-signer', '--clusterrole=example-signer', '--user=alice']);
  await until('sign granted', async () => {
    const now = (await asAlice('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests/to-sign')).json();
    now.status.certificate = cur.status.certificate;
    const w = await asAlice('PUT', path, now);
    return w.status === 200 ? w : undefined;
  });
  const signed = JSON.parse(admin(['get', 'csr', 'to-sign', '-o', 'json']));
  assert.equal(signed.status.certificate, cur.status.certificate);
});

test('OwnerReferencesPermissionEnforcement: delete to change owners, finalizers to block the owner', async () => {
  admin(['create', 'role', 'cm-writer', '-n', 'team', '--verb=get,list,create,update,patch', '--resource=configmaps']);
  admin(['create', 'rolebinding', 'alice-cm-writer', '-n', 'team', '--role=cm-writer', '--user=alice']);
  admin(['create', 'deployment', 'web', '-n', 'team', '--image=nginx']);
  const uid = JSON.parse(admin(['get', 'deployment', 'web', '-n', 'team', '-o', 'json'])).metadata.uid;
  await until('alice may create configmaps', () => canI(['create', 'configmaps', '-n', 'team']));
  const ref = (block: boolean) => ({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid, blockOwnerDeletion: block });
  const base = '/api/v1/namespaces/team/configmaps';

  // creating with an owner needs no delete; blocking the owner needs update on deployments/finalizers
  const plain = await asAlice('POST', base, { metadata: { name: 'owned', ownerReferences: [ref(false)] } });
  assert.equal(plain.status, 201, plain.text);
  const blocked = await asAlice('POST', base, { metadata: { name: 'blocking', ownerReferences: [ref(true)] } });
  assert.equal(blocked.status, 403, blocked.text);
  assert.equal(blocked.json().message, `configmaps "blocking" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>`);

  // changing the owners of an existing object needs delete on it
  const made = await asAlice('POST', base, { metadata: { name: 'free' } });
  assert.equal(made.status, 201, made.text);
  const free = made.json();
  free.metadata.ownerReferences = [ref(false)];
  const upd = await asAlice('PUT', `${base}/free`, free);
  assert.equal(upd.status, 403, upd.text);
  assert.equal(upd.json().message, `configmaps "free" is forbidden: cannot set an ownerRef on a resource you can't delete: , <nil>`);
  // an update that keeps the owners asks nothing (kubectl label as alice)
  const k = alice(['label', 'configmap', 'owned', '-n', 'team', 'a=b']);
  assert.equal(k.code, 0, k.stderr);

  admin(['create', 'role', 'cm-owner', '-n', 'team', '--verb=delete', '--resource=configmaps']);
  admin(['patch', 'role', 'cm-owner', '-n', 'team', '--type=json', '-p', JSON.stringify([{ op: 'add', path: '/rules/-', value: { apiGroups: ['apps'], resources: ['deployments/finalizers'], verbs: ['update'] } }])]);
  admin(['create', 'rolebinding', 'alice-cm-owner', '-n', 'team', '--role=cm-owner', '--user=alice']);
  await until('alice may delete configmaps', () => canI(['delete', 'configmaps', '-n', 'team']));
  const upd2 = await asAlice('PUT', `${base}/free`, free);
  assert.equal(upd2.status, 200, upd2.text);
  const blocked2 = await until('finalizers granted', async () => {
    const r = await asAlice('POST', base, { metadata: { name: 'blocking', ownerReferences: [ref(true)] } });
    return r.status === 201 ? r : undefined;
  });
  assert.equal(blocked2.json().metadata.ownerReferences[0].blockOwnerDeletion, true);
});
