// Objects kube-apiserver 1.33 keeps of itself: the default ServiceCIDR `kubernetes`, and its identity lease.
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

test('the default ServiceCIDR holds --service-cluster-ip-range, is Ready, and comes back when deleted', async () => {
  const got = (await c.raw('GET', PATH)).json();
  assert.deepEqual(got.spec, { cidrs: ['10.100.0.0/16'] });
  const ready = got.status.conditions.find((x: any) => x.type === 'Ready');
  assert.deepEqual({ ...ready, lastTransitionTime: undefined }, { type: 'Ready', status: 'True', lastTransitionTime: undefined, reason: '', message: 'Kubernetes default Service CIDR is ready' });
  const k = c.kubectl(['get', 'servicecidr']);
  assert.equal(k.code, 0, k.stderr);
  assert.match(k.stdout, /^kubernetes\s+10\.100\.0\.0\/16\s/m);
  assert.equal((await c.raw('DELETE', PATH)).status, 200);
  const back = await until('recreated', async () => {
    const r = await c.raw('GET', PATH);
    return r.status === 200 && r.json().metadata.uid !== got.metadata.uid && r.json().status?.conditions?.length ? r.json() : undefined;
  });
  assert.deepEqual(back.spec, { cidrs: ['10.100.0.0/16'] });
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
