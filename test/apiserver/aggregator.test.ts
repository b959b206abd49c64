// The pure parts of the aggregation layer (src/apiserver/aggregator/): where a remote group goes
// among the local ones, how a Service resolves in each routing mode, and the front-proxy headers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeLegacyGroups, groupRanks, entryFromResourceList, type RemoteVersion } from '../../src/apiserver/aggregator/discovery.js';
import { resolveService } from '../../src/apiserver/aggregator/resolve.js';
import { authProxyHeaders } from '../../src/apiserver/aggregator/proxy.js';

const rv = (group: string, version: string, gp: number, vp: number): RemoteVersion => ({ name: `${version}.${group}`, group, version, groupPriority: gp, versionPriority: vp, entry: { version } });
const local = (name: string) => ({ name, versions: [{ groupVersion: `${name}/v1`, version: 'v1' }], preferredVersion: { groupVersion: `${name}/v1`, version: 'v1' } });

test('remote groups are placed by groupPriorityMinimum (then name), versions by versionPriority', () => {
  const ranks = groupRanks([
    { metadata: { name: 'v1.apps' }, spec: { group: 'apps', groupPriorityMinimum: 17800 } },
    { metadata: { name: 'v1.batch' }, spec: { group: 'batch', groupPriorityMinimum: 17400 } },
    { metadata: { name: 'v1.a.io' }, spec: { group: 'a.io', groupPriorityMinimum: 1000 } },
  ]);
  const rankOf = (g: string) => (g === 'apiregistration.k8s.io' ? { priority: Infinity, name: '' } : ranks.get(g));
  const out = mergeLegacyGroups([local('apiregistration.k8s.io'), local('apps'), local('batch'), local('a.io')], [rv('top.io', 'v1', 20000, 1), rv('mid.io', 'v1beta1', 17500, 5), rv('mid.io', 'v1', 17500, 15), rv('b.io', 'v1', 1000, 1)], rankOf);
  assert.deepEqual(out.map((g) => g.name), ['apiregistration.k8s.io', 'top.io', 'apps', 'mid.io', 'batch', 'a.io', 'b.io']);
  assert.deepEqual(out[3].versions.map((v: any) => v.version), ['v1', 'v1beta1']);
  assert.equal(out[3].preferredVersion.version, 'v1');
});

test('a legacy APIResourceList as aggregated discovery: subresources under their resource', () => {
  const e = entryFromResourceList({ resources: [{ name: 'flunders', singularName: 'flunder', namespaced: true, kind: 'Flunder', verbs: ['get'] }, { name: 'flunders/status', namespaced: true, kind: 'Flunder', verbs: ['get'] }] }, 'w.io', 'v1');
  assert.deepEqual(e, {
    version: 'v1',
    freshness: 'Current',
    resources: [{ resource: 'flunders', responseKind: { group: 'w.io', version: 'v1', kind: 'Flunder' }, scope: 'Namespaced', singularResource: 'flunder', verbs: ['get'], subresources: [{ subresource: 'status', responseKind: { group: 'w.io', version: 'v1', kind: 'Flunder' }, verbs: ['get'] }] }],
  });
});

test('a Service resolves as kube-apiserver resolves it, an endpoint for ClusterIP Services in both modes', () => {
  const services: Record<string, any> = {
    'ns/ext': { spec: { type: 'ExternalName', externalName: 'localhost' } },
    'ns/cip': { spec: { type: 'ClusterIP', clusterIP: '10.96.0.9', ports: [{ name: 'https', port: 443 }] } },
    'ns/headless': { spec: { type: 'ClusterIP', clusterIP: 'None', ports: [{ name: 'https', port: 443 }] } },
  };
  const endpoints: Record<string, any> = {
    'ns/cip': { subsets: [{ addresses: [{ ip: '192.0.2.1' }], ports: [{ name: 'https', port: 8443 }] }] },
    'ns/headless': { subsets: [{ addresses: [{ ip: '192.0.2.2' }], ports: [{ name: 'https', port: 8443 }] }] },
  };
  const l = { service: (ns: string, n: string) => services[`${ns}/${n}`], endpoints: (ns: string, n: string) => endpoints[`${ns}/${n}`] };
  const off = { endpointRouting: false, loopback: { host: '127.0.0.1', port: 6443 } };
  const on = { ...off, endpointRouting: true };
  assert.equal(resolveService(l, 'ns', 'ext', 9443, off).hostPort, 'localhost:9443');
  assert.throws(() => resolveService(l, 'ns', 'ext', 9443, on), /unsupported service type "ExternalName"/);
  assert.equal(resolveService(l, 'ns', 'cip', 443, off).hostPort, '192.0.2.1:8443');
  assert.equal(resolveService(l, 'ns', 'cip', 443, on).hostPort, '192.0.2.1:8443');
  assert.throws(() => resolveService(l, 'ns', 'cip', 444, on), /no service port 444 found for service "cip"/);
  assert.throws(() => resolveService(l, 'ns', 'headless', 443, off), /cannot route to service with ClusterIP "None"/);
  assert.equal(resolveService(l, 'ns', 'headless', 443, on).hostPort, '192.0.2.2:8443');
  assert.throws(() => resolveService(l, 'ns', 'gone', 443, off), /service "gone" not found/);
  assert.equal(resolveService(l, 'default', 'kubernetes', 443, off).hostPort, '127.0.0.1:6443');
});

test('the user in the front-proxy headers, extra keys escaped as client-go escapes them', () => {
  assert.deepEqual(authProxyHeaders({ name: 'alice', uid: 'u1', groups: ['g1', 'g2'], extra: { 'authentication.kubernetes.io/credential-id': ['x'], scopes: ['a', 'b'] } }), {
    'X-Remote-User': 'alice',
    'X-Remote-Uid': 'u1',
    'X-Remote-Group': ['g1', 'g2'],
    'X-Remote-Extra-authentication.kubernetes.io%2Fcredential-id': ['x'],
    'X-Remote-Extra-scopes': ['a', 'b'],
  });
});
