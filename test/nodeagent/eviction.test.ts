// The eviction manager's rules (nodeagent/eviction.ts) on given observations: hard and soft
// thresholds (grace periods, minimum reclaim), the pressure conditions and their transition
// period, admission under pressure, the ranking of pods and the kubelet's message. (A real node
// under a threshold it cannot meet: test/e2e/kubelet.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EvictionManager, overLocalLimit, type Observation } from '../../src/nodeagent/eviction.js';
import type { PodStorage } from '../../src/nodeagent/ephemeral.js';
import { parseEvictionThresholds } from '../../src/nodeagent/options.js';
import { nopLogger } from '../../src/client/log.js';
import type { ResourceSample } from '../../src/nodeagent/stats.js';

const Mi = 1024 * 1024;

function pod(name: string, o: { priority?: number; request?: string; besteffort?: boolean } = {}): any {
  const resources = o.besteffort ? {} : { requests: { memory: o.request ?? '10Mi' } };
  return { metadata: { name, namespace: 'ns', uid: `uid-${name}` }, spec: { priority: o.priority ?? 0, terminationGracePeriodSeconds: 30, containers: [{ name: 'main', resources }] } };
}

function setup(cfg: { hard?: Record<string, string>; soft?: Record<string, string>; grace?: Record<string, string>; reclaim?: Record<string, string> }, pods: any[], usageMi: Record<string, number>) {
  const thresholds = parseEvictionThresholds({ evictionHard: cfg.hard ?? {}, evictionSoft: cfg.soft ?? {}, evictionSoftGracePeriod: cfg.grace ?? {}, evictionMinimumReclaim: cfg.reclaim ?? {} });
  let memAvailable = 1000 * Mi;
  const evicted: { uid: string; message: string; grace: number }[] = [];
  const events: string[] = [];
  const sample = async (): Promise<ResourceSample> => ({
    node: { cpu: { time: 0, usageCoreNanoSeconds: 0 }, memory: { time: 0, workingSetBytes: 0 } },
    containers: pods.map((p) => ({ namespace: 'ns', pod: p.metadata.name, podUID: p.metadata.uid, container: 'main', startTime: 0, memory: { time: 0, workingSetBytes: (usageMi[p.metadata.name] ?? 0) * Mi } })),
  });
  const m = new EvictionManager({
    thresholds,
    pressureTransitionPeriodMs: 60_000,
    maxPodGracePeriodSeconds: 5,
    rootDir: '/',
    sample,
    pods: {
      activePods: () => pods.filter((p) => !evicted.some((e) => e.uid === p.metadata.uid)),
      evict: async (uid, message, grace) => (evicted.push({ uid, message, grace }), true),
    },
    nodeEvent: (type, reason, message) => events.push(`${type} ${reason} ${message}`),
    log: nopLogger,
    observe: () => new Map<string, Observation>([['memory.available', { available: memAvailable, capacity: 4096 * Mi }]]),
  });
  return { m, evicted, events, setAvailable: (mi: number) => (memAvailable = mi * Mi) };
}

test('a hard threshold: MemoryPressure, one pod evicted per round (over its request first, then lower priority, then most above its request), with the kubelet\'s message and 1 s of grace', async () => {
  const pods = [pod('guaranteed', { request: '100Mi' }), pod('over-high', { priority: 100, request: '10Mi' }), pod('over-low', { request: '10Mi' }), pod('over-low-more', { request: '10Mi' })];
  const { m, evicted, events, setAvailable } = setup({ hard: { 'memory.available': '500Mi' } }, pods, { guaranteed: 50, 'over-high': 300, 'over-low': 20, 'over-low-more': 40 });
  const t0 = 1_000_000;
  assert.equal(await m.synchronize(t0), undefined, 'nothing met at 1000Mi available');
  assert.deepEqual([...m.conditions()], []);
  setAvailable(400);
  assert.equal(await m.synchronize(t0 + 10_000), 'ns/over-low-more');
  assert.deepEqual([...m.conditions()], ['MemoryPressure']);
  assert.equal(evicted[0]!.grace, 1);
  assert.equal(evicted[0]!.message, 'The node was low on resource: memory. Threshold quantity: 500Mi, available: 400Mi. Container main was using 40Mi, request is 10Mi, has larger consumption of memory. ');
  assert.deepEqual(events, ['Warning EvictionThresholdMet Attempting to reclaim memory']);
  assert.equal(await m.synchronize(t0 + 20_000), 'ns/over-low');
  assert.equal(await m.synchronize(t0 + 30_000), 'ns/over-high');
  assert.equal(await m.synchronize(t0 + 40_000), 'ns/guaranteed');
  // recovered: no eviction, and the condition holds for the transition period
  setAvailable(900);
  assert.equal(await m.synchronize(t0 + 50_000), undefined);
  assert.deepEqual([...m.conditions()], ['MemoryPressure'], 'held for the transition period');
  await m.synchronize(t0 + 40_000 + 60_000);
  assert.deepEqual([...m.conditions()], []);
});

test('a soft threshold evicts after its grace period, with the smaller of the pod\'s grace and --eviction-max-pod-grace-period; the condition comes at once', async () => {
  const { m, evicted, setAvailable } = setup({ soft: { 'memory.available': '500Mi' }, grace: { 'memory.available': '30s' } }, [pod('a')], { a: 20 });
  setAvailable(100);
  const t0 = 5_000_000;
  assert.equal(await m.synchronize(t0), undefined);
  assert.deepEqual([...m.conditions()], ['MemoryPressure']);
  assert.equal(await m.synchronize(t0 + 20_000), undefined);
  assert.equal(await m.synchronize(t0 + 30_000), 'ns/a');
  assert.equal(evicted[0]!.grace, 5);
});

test('minimum reclaim: a met threshold stays met until the signal is above it by the reclaim', async () => {
  const { m, setAvailable } = setup({ hard: { 'memory.available': '500Mi' }, reclaim: { 'memory.available': '200Mi' } }, [pod('a'), pod('b'), pod('c')], {});
  setAvailable(400);
  assert.equal(await m.synchronize(1), 'ns/a');
  setAvailable(600);
  assert.equal(await m.synchronize(2), 'ns/b', 'above the threshold, not by 200Mi');
  setAvailable(701);
  assert.equal(await m.synchronize(3), undefined);
});

test('admission under pressure: MemoryPressure refuses BestEffort pods only; critical pods always come in', async () => {
  const { m, setAvailable } = setup({ hard: { 'memory.available': '500Mi' } }, [], {});
  assert.equal(m.admit(pod('x', { besteffort: true })), undefined);
  setAvailable(100);
  await m.synchronize(Date.now());
  assert.deepEqual(m.admit(pod('x', { besteffort: true })), { reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' });
  assert.equal(m.admit(pod('y')), undefined);
  assert.equal(m.admit(pod('z', { besteffort: true, priority: 2_000_001_000 })), undefined);
});

test('local storage limits: the kubelet\'s checks in its order (emptyDir sizeLimit, the pod\'s total, a container\'s own) and its messages', () => {
  const st = (o: { volumes?: Record<string, number>; ephemeral?: number; containers?: Record<string, [number, number]> }): PodStorage => ({
    volumes: Object.entries(o.volumes ?? {}).map(([name, usedBytes]) => ({ name, usedBytes, inodesUsed: 1 })),
    containers: Object.entries(o.containers ?? {}).map(([name, [rootfsBytes, logsBytes]]) => ({ name, rootfsBytes, logsBytes })),
    ephemeralBytes: o.ephemeral ?? 0,
    time: 0,
  });
  const withSpec = (spec: any) => ({ metadata: { name: 'p', namespace: 'ns', uid: 'u' }, spec });
  const limited = (name: string, limit?: string) => ({ name, resources: limit ? { limits: { 'ephemeral-storage': limit } } : {} });
  // an emptyDir over its sizeLimit, the limit as Go prints it
  const scratch = withSpec({ containers: [limited('main')], volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '1024Ki' } }] });
  assert.equal(overLocalLimit(scratch, st({ volumes: { scratch: 2 * Mi } })), 'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ');
  assert.equal(overLocalLimit(scratch, st({ volumes: { scratch: Mi } })), undefined, 'at the limit is not over it');
  // the pod's total against the sum of its containers' limits
  const two = withSpec({ containers: [limited('a', '1Mi'), limited('b', '512Ki')] });
  assert.equal(overLocalLimit(two, st({ ephemeral: 2 * Mi })), 'Pod ephemeral local storage usage exceeds the total limit of containers 1536Ki. ');
  assert.equal(overLocalLimit(withSpec({ containers: [limited('a', '1M')] }), st({ ephemeral: 2_000_000 })), 'Pod ephemeral local storage usage exceeds the total limit of containers 1M. ');
  // a container over its own limit while the pod is within the sum
  const one = withSpec({ containers: [limited('a', '1Mi'), limited('b', '10Mi')] });
  assert.equal(overLocalLimit(one, st({ ephemeral: 2 * Mi, containers: { a: [Mi, Mi], b: [0, 0] } })), 'Container a exceeded its local ephemeral storage limit "1Mi". ');
  // no limits, nothing over
  assert.equal(overLocalLimit(withSpec({ containers: [limited('a')] }), st({ ephemeral: 100 * Mi, containers: { a: [100 * Mi, 0] } })), undefined);
});

test('a nodefs threshold with local storage measured: pods over their ephemeral-storage request first, then priority, then most above the request; the containers\' use in the message', async () => {
  const thresholds = parseEvictionThresholds({ evictionHard: { 'nodefs.available': '1Gi' }, evictionSoft: {}, evictionSoftGracePeriod: {}, evictionMinimumReclaim: {} });
  const withStorage = (name: string, request: string | undefined, priority = 0) => ({ metadata: { name, namespace: 'ns', uid: `uid-${name}` }, spec: { priority, containers: [{ name: 'main', resources: request ? { requests: { 'ephemeral-storage': request } } : {} }] } });
  const pods = [withStorage('big-within', '100Mi'), withStorage('small-over', '1Mi'), withStorage('over-more', '1Mi'), withStorage('over-high', '1Mi', 100)];
  const usedMi: Record<string, number> = { 'big-within': 90, 'small-over': 2, 'over-more': 20, 'over-high': 50 };
  const evicted: { uid: string; message: string; disruption?: boolean }[] = [];
  const m = new EvictionManager({
    thresholds,
    pressureTransitionPeriodMs: 60_000,
    maxPodGracePeriodSeconds: 0,
    rootDir: '/',
    sample: async () => ({ node: { cpu: { time: 0, usageCoreNanoSeconds: 0 }, memory: { time: 0, workingSetBytes: 0 } }, containers: [] }),
    pods: {
      activePods: () => pods.filter((p) => !evicted.some((e) => e.uid === p.metadata.uid)),
      evict: async (uid, message, _grace, disruption) => (evicted.push({ uid, message, disruption }), true),
    },
    nodeEvent: () => undefined,
    log: nopLogger,
    localStorage: async (p) => ({ volumes: [], containers: [{ name: 'main', rootfsBytes: usedMi[p.metadata.name]! * Mi, logsBytes: 0 }], ephemeralBytes: usedMi[p.metadata.name]! * Mi, time: 0 }),
    observe: () => new Map<string, Observation>([['nodefs.available', { available: 512 * Mi, capacity: 10240 * Mi }]]),
  });
  const t0 = 1_000_000;
  assert.equal(await m.synchronize(t0), 'ns/over-more');
  assert.equal(evicted[0]!.message, 'The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 512Mi. Container main was using 20Mi, request is 1Mi, has larger consumption of ephemeral-storage. ');
  assert.equal(await m.synchronize(t0 + 10_000), 'ns/small-over');
  assert.equal(await m.synchronize(t0 + 20_000), 'ns/over-high');
  assert.equal(await m.synchronize(t0 + 30_000), 'ns/big-within');
});

test('the node-level reclaim of a disk signal: the dead containers, then the unused images, then a look again; a memory signal reclaims neither', async () => {
  let available = 400 * Mi;
  const calls: string[] = [];
  const make = (hard: Record<string, string>, signal: string) =>
    new EvictionManager({
      thresholds: parseEvictionThresholds({ evictionHard: hard, evictionSoft: {}, evictionSoftGracePeriod: {}, evictionMinimumReclaim: {} }),
      pressureTransitionPeriodMs: 60_000,
      maxPodGracePeriodSeconds: 0,
      rootDir: '/',
      sample: async () => ({ node: { cpu: { time: 0, usageCoreNanoSeconds: 0 }, memory: { time: 0, workingSetBytes: 0 } }, containers: [] }),
      pods: { activePods: () => [pod('p')], evict: async () => true },
      nodeEvent: () => undefined,
      log: nopLogger,
      deleteUnusedContainers: async () => {
        calls.push('containers');
        available += 100 * Mi;
      },
      deleteUnusedImages: async () => {
        calls.push('images');
        available += 100 * Mi;
      },
      observe: () => new Map<string, Observation>([[signal, { available, capacity: 4096 * Mi }]]),
    });
  // 400Mi + 200Mi reclaimed >= 512Mi: no eviction
  assert.equal(await make({ 'nodefs.available': '512Mi' }, 'nodefs.available').synchronize(), undefined);
  assert.deepEqual(calls, ['containers', 'images']);
  // not enough reclaimed: a pod goes
  available = 100 * Mi;
  calls.length = 0;
  assert.equal(await make({ 'imagefs.available': '512Mi' }, 'imagefs.available').synchronize(), 'ns/p');
  assert.deepEqual(calls, ['containers', 'images']);
  // memory: nothing of that
  calls.length = 0;
  assert.equal(await make({ 'memory.available': '512Mi' }, 'memory.available').synchronize(), 'ns/p');
  assert.deepEqual(calls, []);
});
