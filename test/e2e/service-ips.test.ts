// Cluster IPs as kube-apiserver 1.33 allocates them (MultiCIDRServiceAllocator): from the
// ServiceCIDRs, each address held by an IPAddress object that names its Service, released when the
// Service lets it go, and repaired when it goes missing. The range is a /29 (six addresses) so
// that a full range is reached.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, type Cluster } from './harness.js';

let c: Cluster;
before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory', '--service-cluster-ip-range=10.0.0.0/29'] });
});
after(async () => {
  await c?.stop();
});

const IPS = '/apis/networking.k8s.io/v1/ipaddresses';
const SVCS = '/api/v1/namespaces/default/services';

function svc(name: string, clusterIP?: string): object {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], ...(clusterIP ? { clusterIP } : {}) } };
}

async function ipAddress(ip: string): Promise<any> {
  const r = await c.raw('GET', `${IPS}/${ip}`);
  return r.status === 200 ? r.json() : undefined;
}

test('the kubernetes Service\'s address and every new Service\'s have an IPAddress naming the Service', async () => {
  const k = await ipAddress('10.0.0.1');
  assert.deepEqual(k.metadata.labels, { 'ipaddress.kubernetes.io/ip-family': 'IPv4', 'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io' });
  // (ParentReference.group is omitempty: a Service's is left out)
  assert.deepEqual(k.spec, { parentRef: { resource: 'services', namespace: 'default', name: 'kubernetes' } });
  const created = c.kubectl(['create', 'service', 'clusterip', 'ip-a', '--tcp=80']);
  assert.equal(created.code, 0, created.stderr);
  const ip = (await c.raw('GET', `${SVCS}/ip-a`)).json().spec.clusterIP;
  // (written before the create was answered)
  assert.deepEqual((await ipAddress(ip))?.spec.parentRef, { resource: 'services', namespace: 'default', name: 'ip-a' });
  const table = c.kubectl(['get', 'ipaddresses']);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, new RegExp(`^${ip.replace(/\./g, '\\.')}\\s+services/default/ip-a\\s*$`, 'm'));
  // deleting the Service frees its address
  assert.equal(c.kubectl(['delete', 'service', 'ip-a']).code, 0);
  assert.equal(await ipAddress(ip), undefined);
});

test('a chosen address: taken by a Service or by any IPAddress, outside every ServiceCIDR, or a network address is 422 in the allocator\'s words', async () => {
  assert.equal((await c.raw('POST', SVCS, { body: svc('ip-static', '10.0.0.3') })).status, 201);
  const twice = await c.raw('POST', SVCS, { body: svc('ip-static2', '10.0.0.3') });
  assert.equal(twice.status, 422);
  assert.equal(twice.json().message, 'Service "ip-static2" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.3"]: failed to allocate IP 10.0.0.3: provided IP is already allocated');
  // an IPAddress a user wrote holds its address as well
  const mine = await c.raw('POST', IPS, { body: { apiVersion: 'networking.k8s.io/v1', kind: 'IPAddress', metadata: { name: '10.0.0.4' }, spec: { parentRef: { group: 'example.com', resource: 'widgets', name: 'w' } } } });
  assert.equal(mine.status, 201, mine.text);
  const held = await c.raw('POST', SVCS, { body: svc('ip-held', '10.0.0.4') });
  assert.equal(held.status, 422);
  assert.match(held.json().message, /failed to allocate IP 10\.0\.0\.4: provided IP is already allocated$/);
  const outside = await c.raw('POST', SVCS, { body: svc('ip-out', '10.9.0.1') });
  assert.equal(outside.status, 422);
  assert.equal(outside.json().message, 'Service "ip-out" is invalid: spec.clusterIPs: Invalid value: ["10.9.0.1"]: failed to allocate IP 10.9.0.1: the provided network does not match the current range');
  const network = await c.raw('POST', SVCS, { body: svc('ip-net', '10.0.0.7') });
  assert.equal(network.status, 422);
  assert.match(network.json().message, /failed to allocate IP 10\.0\.0\.7: the provided IP \(10\.0\.0\.7\) is not in the valid range\. The range of valid IPs is 10\.0\.0\.0\/29$/);
  // a dry run checks the range only, and answers the network address for an allocated one
  const dry = await c.raw('POST', `${SVCS}?dryRun=All`, { body: svc('ip-dry', '10.0.0.3') });
  assert.equal(dry.status, 201, dry.text);
  const dryNext = await c.raw('POST', `${SVCS}?dryRun=All`, { body: svc('ip-dry') });
  assert.equal(dryNext.json().spec.clusterIP, '10.0.0.0');
  assert.equal(await ipAddress('10.0.0.0'), undefined);
  for (const n of ['ip-static']) await c.raw('DELETE', `${SVCS}/${n}`);
  await c.raw('DELETE', `${IPS}/10.0.0.4`);
});

test('a full range is 500 in kube-apiserver\'s words; a ServiceCIDR added widens it; ExternalName gives the address back', async () => {
  const made: string[] = [];
  for (let i = 0; ; i++) {
    const r = await c.raw('POST', SVCS, { body: svc(`ip-fill-${i}`) });
    if (r.status !== 201) {
      assert.equal(r.status, 500, r.text);
      assert.equal(r.json().reason, 'InternalError');
      assert.equal(r.json().message, 'Internal error occurred: failed to allocate a serviceIP: range is full');
      break;
    }
    made.push(`ip-fill-${i}`);
    assert.ok(i < 6, 'a /29 holds six addresses');
  }
  const cidr = await c.raw('POST', '/apis/networking.k8s.io/v1/servicecidrs', { body: { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'ip-extra' }, spec: { cidrs: ['10.1.0.0/28'] } } });
  assert.equal(cidr.status, 201, cidr.text);
  const more = await until('an address of the new ServiceCIDR', async () => {
    const r = await c.raw('POST', SVCS, { body: svc('ip-more') });
    return r.status === 201 ? r.json() : undefined;
  });
  assert.match(more.spec.clusterIP, /^10\.1\.0\.(\d+)$/);
  assert.ok((await ipAddress(more.spec.clusterIP))?.spec.parentRef.name === 'ip-more');
  // (an address other than the one ip-more got at random)
  const pick = more.spec.clusterIP === '10.1.0.2' ? '10.1.0.3' : '10.1.0.2';
  const chosen = await c.raw('POST', SVCS, { body: svc('ip-more2', pick) });
  assert.equal(chosen.status, 201, chosen.text);
  // a change to ExternalName releases the address
  const p = await c.raw('PATCH', `${SVCS}/ip-more2`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { spec: { type: 'ExternalName', externalName: 'example.com' } } });
  assert.equal(p.status, 200, p.text);
  assert.equal(p.json().spec.clusterIP, undefined);
  assert.equal(await ipAddress(pick), undefined);
  for (const n of [...made, 'ip-more', 'ip-more2']) await c.raw('DELETE', `${SVCS}/${n}`);
});

test('the repair loop: a Service\'s deleted IPAddress comes back; an allocator\'s IPAddress its Service does not hold goes', async () => {
  const s = await c.raw('POST', SVCS, { body: svc('ip-repair', '10.0.0.5') });
  assert.equal(s.status, 201, s.text);
  const first = await ipAddress('10.0.0.5');
  assert.equal((await c.raw('DELETE', `${IPS}/10.0.0.5`)).status, 200);
  const back = await until('recreated', async () => {
    const now = await ipAddress('10.0.0.5');
    return now && now.metadata.uid !== first.metadata.uid ? now : undefined;
  });
  assert.deepEqual(back.spec.parentRef, { resource: 'services', namespace: 'default', name: 'ip-repair' });
  const stray = await c.raw('POST', IPS, {
    body: {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'IPAddress',
      metadata: { name: '10.0.0.6', labels: { 'ipaddress.kubernetes.io/ip-family': 'IPv4', 'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io' } },
      spec: { parentRef: { resource: 'services', namespace: 'default', name: 'ip-repair' } },
    },
  });
  assert.equal(stray.status, 201, stray.text);
  await until('the stray IPAddress deleted', async () => ((await ipAddress('10.0.0.6')) === undefined ? true : undefined));
  await c.raw('DELETE', `${SVCS}/ip-repair`);
});
