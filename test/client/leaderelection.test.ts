// Lease-based leader election against a real `keelson server`: two candidates, one leader,
// failover once the lease expires, release on stop, and a leader that loses its Lease stops
// leading. Short durations keep the test quick; nothing asserts timing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, type Cluster } from '../e2e/harness.js';
import { RESTClient } from '../../src/client/rest.js';
import { gvr, resource } from '../../src/client/resources.js';
import { LeaderElector, microTime, validateLeaderElectionConfig } from '../../src/client/leaderelection.js';

let cluster: Cluster;
let rest: RESTClient;
const leases = () => resource(rest, gvr('coordination.k8s.io/v1', 'leases'), 'kube-system');

before(async () => {
  cluster = await startCluster();
  const t = cluster.credentials;
  rest = new RESTClient({ server: cluster.url, ca: t.ca, cert: t.cert, key: t.key, qps: Infinity });
});

after(async () => {
  rest?.close();
  await cluster?.stop();
});

async function until(what: string, pred: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface Candidate {
  elector: LeaderElector;
  leading: boolean;
  startedTimes: number;
  stopped: boolean;
  newLeaders: string[];
  abort: AbortController;
  done: Promise<void>;
}

function candidate(lease: string, identity: string, releaseOnCancel: boolean): Candidate {
  const c: Candidate = { leading: false, startedTimes: 0, stopped: false, newLeaders: [], abort: new AbortController() } as unknown as Candidate;
  c.elector = new LeaderElector({
    client: rest,
    namespace: 'kube-system',
    name: lease,
    identity,
    leaseDurationMs: 2000,
    renewDeadlineMs: 1500,
    retryPeriodMs: 250,
    releaseOnCancel,
    callbacks: {
      onStartedLeading: (signal) => {
        c.leading = true;
        c.startedTimes++;
        signal.addEventListener('abort', () => (c.leading = false));
      },
      onStoppedLeading: () => {
        c.leading = false;
        c.stopped = true;
      },
      onNewLeader: (id) => c.newLeaders.push(id),
    },
  });
  c.done = c.elector.run(c.abort.signal);
  return c;
}

test('config validation matches client-go', () => {
  assert.deepEqual(validateLeaderElectionConfig({ leaseDurationMs: 15000, renewDeadlineMs: 10000, retryPeriodMs: 2000, identity: 'x' }), []);
  assert.deepEqual(validateLeaderElectionConfig({ leaseDurationMs: 10000, renewDeadlineMs: 10000, retryPeriodMs: 2000, identity: 'x' }), ['leaseDuration must be greater than renewDeadline']);
  assert.deepEqual(validateLeaderElectionConfig({ leaseDurationMs: 15000, renewDeadlineMs: 2000, retryPeriodMs: 2000, identity: '' }), [
    'renewDeadline must be greater than retryPeriod*JitterFactor',
    'Lock identity is empty',
  ]);
  assert.equal(microTime(Date.UTC(2024, 0, 2, 3, 4, 5, 67)), '2024-01-02T03:04:05.067000Z');
});

test('two candidates: one leader; failover after the lease expires', async () => {
  const a = candidate('le-failover', 'candidate-a', false);
  await until('a leads', () => a.leading);
  const b = candidate('le-failover', 'candidate-b', false);
  try {
    let l = await leases().get('le-failover');
    assert.equal(l.spec.holderIdentity, 'candidate-a');
    assert.equal(l.spec.leaseDurationSeconds, 2);
    assert.equal(l.spec.leaseTransitions, 0);
    assert.match(l.spec.acquireTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    // b watches a renew for a while and never leads
    const renewed = l.spec.renewTime;
    await until('a renews', async () => (await leases().get('le-failover')).spec.renewTime !== renewed);
    await until('b observes a as leader', () => b.newLeaders.includes('candidate-a'));
    assert.equal(b.leading, false);
    assert.equal(b.elector.isLeader(), false);
    assert.equal(b.elector.getLeader(), 'candidate-a');

    // a goes away without releasing: b takes over once a's lease has expired
    a.abort.abort();
    await a.done;
    assert.equal(a.stopped, true);
    await until('b leads', () => b.leading);
    l = await leases().get('le-failover');
    assert.equal(l.spec.holderIdentity, 'candidate-b');
    assert.equal(l.spec.leaseTransitions, 1);
    assert.equal(b.startedTimes, 1);
  } finally {
    a.abort.abort();
    b.abort.abort();
    await Promise.all([a.done, b.done]);
  }
});

test('release on stop hands the lease over; the new holder increments leaseTransitions', async () => {
  const a = candidate('le-release', 'rel-a', true);
  await until('a leads', () => a.leading);
  const b = candidate('le-release', 'rel-b', true);
  try {
    await until('b follows', () => b.elector.getLeader() === 'rel-a');
    a.abort.abort();
    await a.done;
    const released = await leases().get('le-release');
    // released, or already taken by b
    assert.ok(released.spec.holderIdentity === '' || released.spec.holderIdentity === 'rel-b', JSON.stringify(released.spec));
    await until('b leads', () => b.leading);
    const l = await leases().get('le-release');
    assert.equal(l.spec.holderIdentity, 'rel-b');
    assert.equal(l.spec.leaseTransitions, 1);
  } finally {
    b.abort.abort();
    await b.done;
  }
  // b released too on stop: holderIdentity "" (client-go writes the record's empty holder)
  const l = await leases().get('le-release');
  assert.equal(l.spec.holderIdentity, '');
  assert.equal(l.spec.leaseDurationSeconds, 1);
});

test('a leader that cannot renew (someone else took the Lease) stops leading', async () => {
  const a = candidate('le-lost', 'lost-a', false);
  try {
    await until('a leads', () => a.leading);
    // an intruder writes itself into the Lease with a long duration
    for (;;) {
      const l = await leases().get('le-lost');
      try {
        await leases().update({ ...l, spec: { ...l.spec, holderIdentity: 'intruder', leaseDurationSeconds: 3600, renewTime: microTime(Date.now()) } });
        break;
      } catch {
        /* a renewed meanwhile: try again */
      }
    }
    await a.done; // run() returns once the renew deadline passes
    assert.equal(a.leading, false);
    assert.equal(a.stopped, true);
    assert.equal(a.elector.getLeader(), 'intruder');
    assert.equal((await leases().get('le-lost')).spec.holderIdentity, 'intruder');
  } finally {
    a.abort.abort();
    await a.done;
  }
});

test('the embedded controller manager holds kube-system/kube-controller-manager', async () => {
  await until('the controller manager lease', async () => {
    try {
      return !!(await leases().get('kube-controller-manager')).spec.holderIdentity;
    } catch {
      return false;
    }
  });
  const l = await leases().get('kube-controller-manager');
  assert.equal(l.spec.leaseDurationSeconds, 15);
  assert.match(l.spec.holderIdentity, /_[0-9a-f-]{36}$/);
});
