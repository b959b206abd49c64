// NodeRestriction's ServiceAccountNodeAudienceRestriction (beta, on by default in 1.33): a node's
// token request names at most one audience, one its pod uses (projected token sources, CSI
// drivers' tokenRequests), unless the authorizer allows it `request-serviceaccounts-token-audience`
// on that audience.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nodeRestriction } from '../../src/apiserver/admission/noderestriction.js';
import type { Attributes, Authorizer } from '../../src/apiserver/authz.js';
import { MemoryCluster, attrs, pod, rejection } from './fake.js';

const NODE1 = { name: 'system:node:node1', groups: ['system:nodes', 'system:authenticated'] };

/** an authorizer that allows the given (verb, resource, name, namespace) and records what it was asked */
function authorizer(allowed: { resource: string; name?: string }[]): Authorizer & { asked: Attributes[] } {
  const asked: Attributes[] = [];
  return {
    asked,
    authorize(a) {
      asked.push(a);
      const ok = a.verb === 'request-serviceaccounts-token-audience' && allowed.some((x) => x.resource === a.resource && (x.name === undefined || x.name === a.name));
      return { decision: ok ? 'allow' : 'noOpinion', reason: '' };
    },
    rulesFor: () => ({ resourceRules: [], nonResourceRules: [], incomplete: false }),
  };
}

function setup(opts: { gate?: boolean; allowed?: { resource: string; name?: string }[] } = {}) {
  const c = new MemoryCluster();
  c.namespace('apps');
  const volumes = [
    { name: 'kube-api-access', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }] } },
    { name: 'vault', projected: { sources: [{ serviceAccountToken: { path: 't', audience: 'vault' } }] } },
    { name: 'inline', csi: { driver: 'secrets.csi.example' } },
    { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
    { name: 'share', azureFile: { shareName: 's', secretName: 'x' } },
  ];
  c.add('', 'pods', pod('mine', 'apps', { nodeName: 'node1', serviceAccountName: 'builder', volumes }, { uid: 'uid-mine' }));
  c.add('', 'pods', pod('bare', 'apps', { nodeName: 'node1', serviceAccountName: 'builder' }, { uid: 'uid-bare' }));
  c.add('storage.k8s.io', 'csidrivers', { metadata: { name: 'secrets.csi.example' }, spec: { tokenRequests: [{ audience: 'inline-aud' }] } });
  c.add('storage.k8s.io', 'csidrivers', { metadata: { name: 'disk.csi.example' }, spec: { tokenRequests: [{ audience: 'pv-aud' }] } });
  c.add('storage.k8s.io', 'csidrivers', { metadata: { name: 'file.csi.azure.com' }, spec: { tokenRequests: [{ audience: 'azure-aud' }] } });
  c.add('', 'persistentvolumeclaims', { metadata: { name: 'data', namespace: 'apps' }, spec: { volumeName: 'pv-1' } });
  c.add('', 'persistentvolumes', { metadata: { name: 'pv-1' }, spec: { csi: { driver: 'disk.csi.example', volumeHandle: 'h' } } });
  const authz = authorizer(opts.allowed ?? []);
  return { c, authz, p: nodeRestriction(c, { serviceAccountNodeAudienceRestriction: opts.gate, authorizer: authz }) };
}

const tokenRequest = (podName: string, uid: string, audiences?: string[]) => ({
  apiVersion: 'authentication.k8s.io/v1',
  kind: 'TokenRequest',
  spec: { ...(audiences ? { audiences } : {}), boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: podName, uid } },
});

const request = (p: ReturnType<typeof setup>['p'], podName: string, uid: string, audiences?: string[], sa = 'builder') =>
  p.mutate!(attrs('serviceaccounts', 'CREATE', { subresource: 'token', namespace: 'apps', name: sa, object: tokenRequest(podName, uid, audiences), user: NODE1 }));

test('audiences the pod uses: the API server\'s own (no audience), a projected source\'s, a CSI driver\'s (inline, through a claim, an in-tree volume migrated to CSI)', async () => {
  const { p, authz } = setup();
  await request(p, 'mine', 'uid-mine');
  await request(p, 'mine', 'uid-mine', ['vault']);
  await request(p, 'mine', 'uid-mine', ['inline-aud']);
  await request(p, 'mine', 'uid-mine', ['pv-aud']);
  await request(p, 'mine', 'uid-mine', ['azure-aud']);
  assert.deepEqual(authz.asked, [], 'the authorizer is asked only about audiences no volume uses');
});

test('an audience the pod does not use: Forbidden, unless the node may request-serviceaccounts-token-audience on it', async () => {
  const { p, authz } = setup({ allowed: [{ resource: 'registry-aud' }] });
  let err = await rejection(() => request(p, 'bare', 'uid-bare', ['other-aud']));
  assert.equal(err.status?.code ?? err.code, 403);
  assert.equal(err.message, 'serviceaccounts "builder" is forbidden: audience "other-aud" not found in pod spec volume, system:node:node1 is not authorized to request tokens for this audience');
  assert.deepEqual(authz.asked.at(-1), { user: NODE1, verb: 'request-serviceaccounts-token-audience', namespace: 'apps', apiGroup: '', resource: 'other-aud', name: 'builder', resourceRequest: true });
  await request(p, 'bare', 'uid-bare', ['registry-aud']);
  // the bare pod has no projected token source: even the API server's audience needs the grant
  err = await rejection(() => request(p, 'bare', 'uid-bare'));
  assert.equal(err.message, 'serviceaccounts "builder" is forbidden: audience "" not found in pod spec volume, system:node:node1 is not authorized to request tokens for this audience');
  err = await rejection(() => request(p, 'mine', 'uid-mine', ['vault', 'registry-aud']));
  assert.equal(err.message, 'serviceaccounts "builder" is forbidden: node may only request 0 or 1 audiences');
});

test('a grant may name the service account (resourceNames)', async () => {
  const { p } = setup({ allowed: [{ resource: 'registry-aud', name: 'deployer' }] });
  const err = await rejection(() => request(p, 'bare', 'uid-bare', ['registry-aud']));
  assert.match(err.message, /not authorized to request tokens for this audience$/);
});

test('with ServiceAccountNodeAudienceRestriction off: any audience, as before; the pod binding is checked either way', async () => {
  const { p } = setup({ gate: false });
  await request(p, 'bare', 'uid-bare', ['other-aud']);
  await request(p, 'bare', 'uid-bare', ['a', 'b']);
  const err = await rejection(() => request(p, 'bare', 'wrong-uid', ['other-aud']));
  assert.match(err.message, /the UID in the bound object reference \(wrong-uid\) does not match the UID in record/);
});
