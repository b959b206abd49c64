// Objects kube-apiserver 1.33 keeps of itself: the default ServiceCIDR `kubernetes` (and what the
// controller manager's service-cidr-controller does with ServiceCIDRs), and its identity lease.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { startCluster, until, type Cluster } from './harness.js';

let c: Cluster;
before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory', '--service-cluster-ip-range=10.100.0.0/16'] });
});
after(async () => {
  await c?.stop();
});

const PATH = '/apis/networking.k8s.io/v1/servicecidrs/kubernetes';

test('the default ServiceCIDR holds --service-cluster-ip-range and is Ready; the ServiceCIDR controller guards it while the kubernetes Service\'s address lies in it; once gone, it comes back', async () => {
  const got = (await c.raw('GET', PATH)).json();
  assert.deepEqual(got.spec, { cidrs: ['10.100.0.0/16'] });
  const ready = got.status.conditions.find((x: any) => x.type === 'Ready');
  assert.equal(ready.status, 'True');
  const k = c.kubectl(['get', 'servicecidr']);
  assert.equal(k.code, 0, k.stderr);
  assert.match(k.stdout, /^kubernetes\s+10\.100\.0\.0\/16\s/m);
  // the controller manager's service-cidr-controller: its finalizer, and Ready in its words
  const guarded = await until('the finalizer and the controller\'s condition', async () => {
    const o = (await c.raw('GET', PATH)).json();
    const r = (o.status?.conditions ?? []).find((x: any) => x.type === 'Ready');
    return o.metadata.finalizers?.includes('networking.k8s.io/service-cidr-finalizer') && r?.message === 'Kubernetes Service CIDR is ready' ? o : undefined;
  });
  assert.deepEqual(guarded.metadata.finalizers, ['networking.k8s.io/service-cidr-finalizer']);
  assert.deepEqual(
    { ...guarded.status.conditions[0], lastTransitionTime: undefined },
    { type: 'Ready', status: 'True', lastTransitionTime: undefined, reason: '', message: 'Kubernetes Service CIDR is ready' },
  );
  // a delete leaves it terminating: 10.100.0.1 (the kubernetes Service's) lies in no other ServiceCIDR
  assert.equal((await c.raw('DELETE', PATH)).status, 200);
  const blocked = await until('Ready=False, Terminating', async () => {
    const o = (await c.raw('GET', PATH)).json();
    const r = (o.status?.conditions ?? []).find((x: any) => x.type === 'Ready');
    return r?.status === 'False' ? { o, r } : undefined;
  });
  assert.ok(blocked.o.metadata.deletionTimestamp);
  assert.equal(blocked.r.reason, 'Terminating');
  assert.equal(blocked.r.message, 'There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR');
  // a terminating ServiceCIDR hands out no addresses
  const svc = await c.raw('POST', '/api/v1/namespaces/default/services', { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'cidr-terminating' }, spec: { ports: [{ port: 80 }] } } });
  assert.equal(svc.status, 500, svc.text);
  assert.equal(svc.json().message, 'Internal error occurred: failed to allocate a serviceIP: range is full');
  // taking the finalizer off by hand lets it go; the API server writes it again
  const off = await c.raw('PATCH', PATH, { headers: { 'content-type': 'application/merge-patch+json' }, body: { metadata: { finalizers: null } } });
  assert.equal(off.status, 200, off.text);
  const back = await until('recreated', async () => {
    const r = await c.raw('GET', PATH);
    return r.status === 200 && r.json().metadata.uid !== got.metadata.uid && !r.json().metadata.deletionTimestamp && r.json().status?.conditions?.length ? r.json() : undefined;
  });
  assert.deepEqual(back.spec, { cidrs: ['10.100.0.0/16'] });
});

test('a ServiceCIDR whose addresses another holds, or that holds none in use, is deleted 10 s after the delete', async () => {
  const CIDRS = '/apis/networking.k8s.io/v1/servicecidrs';
  const made = await c.raw('POST', CIDRS, { body: { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'cidr-spare' }, spec: { cidrs: ['10.100.128.0/24'] } } });
  assert.equal(made.status, 201, made.text);
  await until('guarded', async () => ((await c.raw('GET', `${CIDRS}/cidr-spare`)).json().metadata.finalizers?.length ? true : undefined));
  const t0 = Date.now();
  assert.equal((await c.raw('DELETE', `${CIDRS}/cidr-spare`)).status, 200);
  await until('deleted', async () => ((await c.raw('GET', `${CIDRS}/cidr-spare`)).status === 404 ? true : undefined), 30_000);
  assert.ok(Date.now() - t0 >= 9_000, 'the finalizer stays for the grace period');
});

test('the identity lease: kube-system/apiserver-<base32 of the host name\'s hash>, labelled, held by <name>_<uuid> for an hour', async () => {
  const hash = createHash('sha256').update(hostname()).digest().subarray(0, 16);
  // RFC 4648 base32, lower-case, unpadded
  let bits = '';
  for (const b of hash) bits += b.toString(2).padStart(8, '0');
  const name = `apiserver-${(bits.match(/.{1,5}/g) ?? []).map((g) => 'abcdefghijklmnopqrstuvwxyz234567'[parseInt(g.padEnd(5, '0'), 2)]).join('')}`;
  const l = (await c.raw('GET', `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${name}`)).json();
  assert.deepEqual(l.metadata.labels, { 'apiserver.kubernetes.io/identity': 'kube-apiserver', 'kubernetes.io/hostname': hostname() });
  assert.match(l.spec.holderIdentity, new RegExp(`^${name}_[0-9a-f-]{36}$`));
  assert.equal(l.spec.leaseDurationSeconds, 3600);
  assert.match(l.spec.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  const listed = (await c.raw('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?labelSelector=apiserver.kubernetes.io%2Fidentity%3Dkube-apiserver')).json();
  assert.deepEqual(listed.items.map((i: any) => i.metadata.name), [name]);
  // renewed every 10 s by the same holder
  const renewed = await until('renewed', async () => {
    const now = (await c.raw('GET', `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${name}`)).json();
    return now.spec.renewTime !== l.spec.renewTime ? now : undefined;
  }, 20_000);
  assert.equal(renewed.spec.holderIdentity, l.spec.holderIdentity);
  assert.ok(Date.parse(renewed.spec.renewTime) > Date.parse(l.spec.renewTime));
});

test('the controller manager records its leadership as kube-controller-manager does: a LeaderElection event on its Lease', async () => {
  const lease = (await c.raw('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager')).json();
  const holder = lease.spec.holderIdentity;
  assert.match(holder, /_[0-9a-f-]{36}$/);
  const ev = await until('the event', async () => {
    const list = (await c.raw('GET', '/api/v1/namespaces/kube-system/events?fieldSelector=reason%3DLeaderElection')).json();
    return list.items.find((e: any) => e.message === `${holder} became leader`);
  });
  assert.deepEqual(
    { kind: ev.involvedObject.kind, apiVersion: ev.involvedObject.apiVersion, name: ev.involvedObject.name, uid: ev.involvedObject.uid, type: ev.type, source: ev.source, reportingComponent: ev.reportingComponent, count: ev.count },
    { kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', name: 'kube-controller-manager', uid: lease.metadata.uid, type: 'Normal', source: { component: 'kube-controller-manager' }, reportingComponent: 'kube-controller-manager', count: 1 },
  );
  assert.match(ev.metadata.name, /^kube-controller-manager\.[0-9a-f]+$/);
});
