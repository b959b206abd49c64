// The authorization-based admission plugins (CertificateApproval, CertificateSigning,
// OwnerReferencesPermissionEnforcement) against an authorizer that allows a fixed list of
// attribute patterns: every question the plugins ask is recorded and checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Attributes, Authorizer } from '../../src/apiserver/authz.js';
import { buildAdmissionChain } from '../../src/apiserver/admission/chain.js';
import { BUILTIN_KINDS } from '../../src/schema/kinds.js';
import { MemoryCluster, attrs, rejection } from './fake.js';

const ALICE = { name: 'alice', groups: ['system:authenticated'] };

/** allows the attributes whose listed fields all match one of `allowed` */
class ListAuthorizer implements Authorizer {
  readonly asked: Attributes[] = [];
  constructor(private readonly allowed: Partial<Attributes>[]) {}
  authorize(a: Attributes) {
    this.asked.push(a);
    const ok = this.allowed.some((p) => Object.entries(p).every(([k, v]) => (a as any)[k] === v));
    return ok ? { decision: 'allow' as const, reason: '' } : { decision: 'noOpinion' as const, reason: '' };
  }
  rulesFor() {
    return { resourceRules: [], nonResourceRules: [], incomplete: false };
  }
}

function chain(authz: Authorizer, enable: string[] = []) {
  const m = new MemoryCluster();
  return buildAdmissionChain({ enable, disable: [], reader: m, writer: m, authorizer: authz, kinds: () => BUILTIN_KINDS });
}

function csr(signerName: string, status: any = {}): any {
  return { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'req' }, spec: { signerName, request: 'eA==', usages: ['client auth'] }, status };
}

const approved = { conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'ok' }] };

test('CertificateApproval: approve on signers/<name>, or on <domain>/*', async () => {
  const signer = 'kubernetes.io/kube-apiserver-client';
  const none = new ListAuthorizer([]);
  const e = await rejection(() =>
    chain(none).validate(attrs('certificatesigningrequests', 'UPDATE', { subresource: 'approval', name: 'req', object: csr(signer, approved), oldObject: csr(signer), user: ALICE })),
  );
  assert.equal(e.code, 403);
  assert.equal(e.message, `certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not permitted to approve requests with signerName "${signer}"`);
  // the exact name first, then the domain wildcard, both on signers of certificates.k8s.io
  assert.deepEqual(
    none.asked.map((a) => [a.verb, a.apiGroup, a.apiVersion, a.resource, a.name, a.resourceRequest]),
    [
      ['approve', 'certificates.k8s.io', '*', 'signers', signer, true],
      ['approve', 'certificates.k8s.io', '*', 'signers', 'kubernetes.io/*', true],
    ],
  );
  for (const name of [signer, 'kubernetes.io/*']) {
    const ok = new ListAuthorizer([{ verb: 'approve', resource: 'signers', name }]);
    await chain(ok).validate(attrs('certificatesigningrequests', 'UPDATE', { subresource: 'approval', name: 'req', object: csr(signer, approved), oldObject: csr(signer), user: ALICE }));
  }
  // another signer's approval is not enough; other subresources are not this plugin's
  const other = new ListAuthorizer([{ verb: 'approve', resource: 'signers', name: 'example.com/*' }]);
  await rejection(() => chain(other).validate(attrs('certificatesigningrequests', 'UPDATE', { subresource: 'approval', name: 'req', object: csr(signer, approved), oldObject: csr(signer), user: ALICE })));
  await chain(none).validate(attrs('certificatesigningrequests', 'UPDATE', { name: 'req', object: csr(signer), oldObject: csr(signer), user: ALICE }));
});

test('CertificateSigning: sign is needed only when status.certificate changes', async () => {
  const signer = 'example.com/signer';
  const none = new ListAuthorizer([]);
  // conditions alone (a Failed condition) do not need sign
  await chain(none).validate(
    attrs('certificatesigningrequests', 'UPDATE', { subresource: 'status', name: 'req', object: csr(signer, { conditions: [{ type: 'Failed', status: 'True' }] }), oldObject: csr(signer), user: ALICE }),
  );
  assert.equal(none.asked.length, 0);
  const e = await rejection(() =>
    chain(none).validate(attrs('certificatesigningrequests', 'UPDATE', { subresource: 'status', name: 'req', object: csr(signer, { ...approved, certificate: 'Y2VydA==' }), oldObject: csr(signer, approved), user: ALICE })),
  );
  assert.equal(e.message, `certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not permitted to sign requests with signerName "${signer}"`);
  assert.deepEqual(none.asked.map((a) => [a.verb, a.name]), [['sign', signer], ['sign', 'example.com/*']]);
  const ok = new ListAuthorizer([{ verb: 'sign', resource: 'signers', name: 'example.com/*' }]);
  await chain(ok).validate(attrs('certificatesigningrequests', 'UPDATE', { subresource: 'status', name: 'req', object: csr(signer, { ...approved, certificate: 'Y2VydA==' }), oldObject: csr(signer, approved), user: ALICE }));
});

test('the plugins are on by default but OwnerReferencesPermissionEnforcement is opt-in', () => {
  const c = chain(new ListAuthorizer([]));
  for (const p of ['CertificateApproval', 'CertificateSigning', 'ClusterTrustBundleAttest']) assert.ok(c.plugins.includes(p), p);
  assert.ok(!c.plugins.includes('OwnerReferencesPermissionEnforcement'));
});

function cm(name: string, owners?: any[]): any {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'team', ...(owners ? { ownerReferences: owners } : {}) }, data: {} };
}
const owner = (block?: boolean) => ({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u1', ...(block === undefined ? {} : { blockOwnerDeletion: block }) });

test('OwnerReferencesPermissionEnforcement: delete on the object to change its owners', async () => {
  const none = new ListAuthorizer([]);
  const c = chain(none, ['OwnerReferencesPermissionEnforcement']);
  // a create may set owners without delete; an update that keeps them asks nothing
  await c.validate(attrs('configmaps', 'CREATE', { object: cm('a', [owner()]), user: ALICE }));
  await c.validate(attrs('configmaps', 'UPDATE', { object: cm('a', [owner()]), oldObject: cm('a', [owner()]), user: ALICE }));
  assert.equal(none.asked.length, 0);
  const e = await rejection(() => c.validate(attrs('configmaps', 'UPDATE', { object: cm('a', [owner()]), oldObject: cm('a'), user: ALICE })));
  assert.equal(e.code, 403);
  assert.equal(e.message, `configmaps "a" is forbidden: cannot set an ownerRef on a resource you can't delete: , <nil>`);
  assert.deepEqual([none.asked[0]!.verb, none.asked[0]!.resource, none.asked[0]!.namespace, none.asked[0]!.name], ['delete', 'configmaps', 'team', 'a']);
  const del = new ListAuthorizer([{ verb: 'delete', resource: 'configmaps' }]);
  await chain(del, ['OwnerReferencesPermissionEnforcement']).validate(attrs('configmaps', 'UPDATE', { object: cm('a', [owner(false)]), oldObject: cm('a', [owner()]), user: ALICE }));
  // pods/status is left out
  await c.validate(attrs('pods', 'UPDATE', { subresource: 'status', name: 'p', namespace: 'team', object: { metadata: { name: 'p', ownerReferences: [owner()] } }, oldObject: { metadata: { name: 'p' } }, user: ALICE }));
});

test('OwnerReferencesPermissionEnforcement: blockOwnerDeletion needs update on the owner finalizers', async () => {
  const none = new ListAuthorizer([]);
  const c = chain(none, ['OwnerReferencesPermissionEnforcement']);
  const e = await rejection(() => c.validate(attrs('configmaps', 'CREATE', { object: cm('a', [owner(true)]), user: ALICE })));
  assert.equal(e.message, `configmaps "a" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>`);
  const q = none.asked.at(-1)!;
  assert.deepEqual([q.verb, q.apiGroup, q.apiVersion, q.resource, q.subresource, q.namespace, q.name], ['update', 'apps', 'v1', 'deployments', 'finalizers', 'team', 'web']);
  const fin = new ListAuthorizer([{ verb: 'update', resource: 'deployments', subresource: 'finalizers', name: 'web' }, { verb: 'delete' }]);
  const ok = chain(fin, ['OwnerReferencesPermissionEnforcement']);
  await ok.validate(attrs('configmaps', 'CREATE', { object: cm('a', [owner(true)]), user: ALICE }));
  // from unset to true is a new block; true that stays true is not asked again
  await ok.validate(attrs('configmaps', 'UPDATE', { object: cm('a', [owner(true)]), oldObject: cm('a', [owner()]), user: ALICE }));
  const del = new ListAuthorizer([{ verb: 'delete' }]);
  await chain(del, ['OwnerReferencesPermissionEnforcement']).validate(
    attrs('configmaps', 'UPDATE', { object: cm('a', [owner(true), { ...owner(), uid: 'u2', name: 'other' }]), oldObject: cm('a', [owner(true)]), user: ALICE }),
  );
  // a cluster-scoped owner is asked without a namespace; an unknown kind cannot be mapped
  const ns = new ListAuthorizer([]);
  await rejection(() => chain(ns, ['OwnerReferencesPermissionEnforcement']).validate(attrs('configmaps', 'CREATE', { object: cm('a', [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'n', blockOwnerDeletion: true }]), user: ALICE })));
  assert.equal(ns.asked.at(-1)!.namespace, '');
  assert.equal(ns.asked.at(-1)!.resource, 'nodes');
  const e2 = await rejection(() => ok.validate(attrs('configmaps', 'CREATE', { object: cm('a', [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: 'w', blockOwnerDeletion: true }]), user: ALICE })));
  assert.equal(e2.message, `configmaps "a" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion example.com/v1 Kind Widget: no matches for kind "Widget" in version "example.com/v1"`);
});
