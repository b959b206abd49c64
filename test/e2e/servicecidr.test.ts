// The default ServiceCIDR `kubernetes`, kept as kube-apiserver 1.33 keeps it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
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
