// The image garbage collector's policy (nodeagent/imagegc.ts) on a fake runtime and clock: least
// recently used first, the minimum age, pinned and in-use images kept, the amount to free, the
// kubelet's error and events when too little is freed, the maximum age, the loop and the
// eviction manager's node-level reclaim. (A real containerd: test/e2e/kubelet-imagegc.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ImageGCManager, normalizeImageRef, type ImageGCOptions, type ImageGCPolicy, type ImageGCRuntime } from '../../src/nodeagent/imagegc.js';
import { EvictionManager, type Observation } from '../../src/nodeagent/eviction.js';
import { parseEvictionThresholds } from '../../src/nodeagent/options.js';
import { nopLogger, type Logger } from '../../src/client/log.js';

const MIN = 60_000;
const id = (n: string) => `sha256:${n.padEnd(64, '0')}`;

interface FakeImage { id: string; size: number; pinned?: boolean; repoTags?: string[] }

function fakeRuntime(images: FakeImage[], o: { sandboxImage?: string; failRemove?: Set<string> } = {}) {
  const state = {
    images: [...images],
    /** containers: the image reference each refers to */
    containers: [] as { imageRef: string; state: string }[],
    removed: [] as string[],
    capacity: 1000,
    available: 900,
  };
  const runtime: ImageGCRuntime = {
    listImages: async () => state.images.map((i) => ({ id: i.id, size: i.size, pinned: !!i.pinned, repoTags: i.repoTags ?? [], repoDigests: [], username: '' })) as any,
    listContainers: async () => state.containers.map((c, i) => ({ id: `c${i}`, imageRef: c.imageRef, image: { image: c.imageRef }, state: c.state, metadata: { name: `c${i}` }, labels: {} })) as any,
    removeImage: async (spec) => {
      const ref = typeof spec === 'string' ? spec : spec.image!;
      if (o.failRemove?.has(ref)) throw new Error(`rpc error: code = Unknown desc = cannot remove ${ref}`);
      state.removed.push(ref);
      state.images = state.images.filter((i) => i.id !== ref);
      state.available += images.find((i) => i.id === ref)?.size ?? 0;
    },
    imageFsInfo: async () => ({ imageFilesystems: [{ fsId: { mountpoint: '/var/lib/containerd/snapshots' } }], containerFilesystems: [] }) as any,
    status: async () => ({ info: o.sandboxImage ? { config: JSON.stringify({ sandboxImage: o.sandboxImage }) } : {} }) as any,
  };
  return { runtime, state };
}

function setup(images: FakeImage[], policy: Partial<ImageGCPolicy> = {}, o: { sandboxImage?: string; podInfra?: string; failRemove?: Set<string>; log?: Logger; periodMs?: number; pullRecords?: ImageGCOptions['pullRecords'] } = {}) {
  const { runtime, state } = fakeRuntime(images, o);
  let now = 10 * MIN;
  const events: string[] = [];
  const gc = new ImageGCManager({
    highThresholdPercent: 85,
    lowThresholdPercent: 80,
    minAgeMs: 2 * MIN,
    maxAgeMs: 0,
    ...policy,
    runtime,
    log: o.log ?? nopLogger,
    nodeEvent: (type, reason, message) => events.push(`${type} ${reason} ${message}`),
    sandboxImage: o.podInfra,
    periodMs: o.periodMs,
    pullRecords: o.pullRecords,
    statfs: (path) => {
      assert.equal(path, '/var/lib/containerd/snapshots', 'the image file system is the one CRI ImageFsInfo names');
      return { capacity: state.capacity, available: state.available };
    },
    now: () => now,
  });
  return { gc, state, events, advance: (ms: number) => (now += ms), now: () => now };
}

test('under the high threshold nothing is removed; over it, unused images go least recently used first (then first detected) until the low threshold is reached', async () => {
  const A = id('a'), B = id('b'), C = id('c'), D = id('d'), E = id('e');
  const { gc, state, events, advance, now } = setup([
    { id: A, size: 50 }, { id: B, size: 70 }, { id: C, size: 60 }, { id: D, size: 30 }, { id: E, size: 10 },
  ]);
  const began = now();
  // A is used first, then B; C and D are never used, D detected later than C; E is in use now
  await gc.detectImages(now());
  state.containers = [{ imageRef: A, state: 'CONTAINER_EXITED' }];
  advance(MIN);
  await gc.detectImages(now());
  state.containers = [{ imageRef: B, state: 'CONTAINER_EXITED' }];
  advance(MIN);
  await gc.detectImages(now());
  state.containers = [{ imageRef: E, state: 'CONTAINER_RUNNING' }];
  advance(3 * MIN);
  // (D is gone from the runtime and comes back: detected anew, later than C)
  state.images = state.images.filter((i) => i.id !== D);
  await gc.detectImages(now());
  state.images.push({ id: D, size: 30 });
  await gc.detectImages(now() - 2 * MIN - 1);
  assert.equal(gc.imageRecords().get(D)!.firstDetected, now() - 2 * MIN - 1);

  // 10% used: under 85%
  await gc.garbageCollect(began);
  assert.deepEqual(state.removed, []);
  assert.deepEqual(events, []);

  // 90% used: free 1000*(100-80)/100 - 100 = 100 bytes: C (never used, detected first: 60), D (30), A (50): 140 >= 100
  state.available = 100;
  await gc.garbageCollect(began);
  assert.deepEqual(state.removed, [C, D, A]);
  assert.deepEqual(events, []);
  assert.deepEqual([...gc.imageRecords().keys()].sort(), [B, E].sort(), 'removed images leave the records');
});

test('KubeletEnsureSecretPulledImages\' records: each detection prunes those of images the runtime no longer lists, written before the start of the second it was asked', async () => {
  const A = id('a'), B = id('b');
  const calls: { refs: string[]; until: number }[] = [];
  const { gc, state, now, advance } = setup([{ id: A, size: 50 }, { id: B, size: 70 }], {}, { pullRecords: { pruneUnknownRecords: (refs, until) => void calls.push({ refs, until }) } });
  const before = Date.now();
  await gc.detectImages(now());
  assert.deepEqual(calls.map((c) => c.refs), [[A, B]]);
  assert.ok(calls[0]!.until <= before && calls[0]!.until > before - 1000 && calls[0]!.until % 1000 === 0, `until ${calls[0]!.until} is the start of the second of ${before}`);
  state.images = state.images.filter((i) => i.id !== A);
  advance(MIN);
  await gc.detectImages(now());
  assert.deepEqual(calls[1]!.refs, [B]);
});

test('the amount to free is capacity*(100-low)/100 - available, in integers, and usage is 100 - available*100/capacity truncated', async () => {
  const A = id('a'), B = id('b');
  const lines: { msg: string; kv?: Record<string, unknown> }[] = [];
  const log: Logger = { ...nopLogger, info: (msg, kv) => lines.push({ msg, kv }) };
  const { gc, state, advance, now } = setup([{ id: A, size: 7 }, { id: B, size: 1000 }], { highThresholdPercent: 50, lowThresholdPercent: 33 }, { log });
  const began = now();
  await gc.detectImages(now());
  advance(5 * MIN);
  state.capacity = 1001;
  state.available = 501; // 100 - trunc(50.05) = 50 >= 50
  await gc.garbageCollect(began);
  const over = lines.find((l) => l.msg.startsWith('Disk usage on image filesystem is over the high threshold'));
  assert.deepEqual(over?.kv, { usage: 50, highThreshold: 50, amountToFree: Math.trunc((1001 * 67) / 100) - 501, lowThreshold: 33 });
  assert.equal(Math.trunc((1001 * 67) / 100) - 501, 169);
  // A (7) is not enough, B goes too
  assert.deepEqual(state.removed, [A, B]);
  assert.deepEqual(lines.filter((l) => l.msg === 'Removing image to free bytes').map((l) => l.kv), [{ imageID: A, size: 7, runtimeHandler: '' }, { imageID: B, size: 1000, runtimeHandler: '' }]);
  // 511 available: 100 - trunc(51.04...) = 49 < 50
  const C = id('c');
  state.images.push({ id: C, size: 1 });
  state.available = 511;
  await gc.detectImages(now() - 5 * MIN);
  await gc.garbageCollect(began);
  assert.deepEqual(state.removed, [A, B], 'at 49% nothing is collected');
});

test('the minimum age: an image first detected less than imageMinimumGCAge ago stays, even when too little is freed', async () => {
  const A = id('a'), B = id('b');
  const { gc, state, events, advance, now } = setup([{ id: A, size: 100 }]);
  const began = now();
  await gc.detectImages(now());
  advance(MIN);
  state.images.push({ id: B, size: 500 });
  await gc.detectImages(now());
  advance(MIN + 30_000); // A is 2m30s old, B 1m30s
  state.available = 50; // 95% used: 150 bytes to free
  await assert.rejects(gc.garbageCollect(began), { message: 'Failed to garbage collect required amount of images. Attempted to free 150 bytes, but only found 100 bytes eligible to free.' });
  assert.deepEqual(state.removed, [A]);
  assert.deepEqual(events, ['Warning FreeDiskSpaceFailed Failed to garbage collect required amount of images. Attempted to free 150 bytes, but only found 100 bytes eligible to free.']);
  // 30 s later B is 2 minutes old
  advance(30_000);
  state.available = 50;
  await gc.garbageCollect(began);
  assert.deepEqual(state.removed, [A, B]);
});

test('too little freed: the kubelet\'s error and a FreeDiskSpaceFailed event; the loop logs the first failure and makes an ImageGCFailed event for the next', async () => {
  const A = id('a');
  const errors: string[] = [];
  const log: Logger = { ...nopLogger, error: (e, msg) => errors.push(`${msg}: ${(e as Error).message}`) };
  const { gc, state, events } = setup([{ id: A, size: 30 }], { minAgeMs: 0 }, { log, periodMs: 5 });
  state.available = 100; // 90% used: 100 bytes to free, 30 eligible
  gc.start();
  const until = Date.now() + 5000;
  while (events.filter((e) => e.includes('ImageGCFailed')).length < 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  await gc.stop();
  const message = 'Failed to garbage collect required amount of images. Attempted to free 100 bytes, but only found 30 bytes eligible to free.';
  assert.equal(events[0], `Warning FreeDiskSpaceFailed ${message}`);
  // the second round finds nothing eligible: 70 bytes short after A's 30 were freed
  const second = 'Failed to garbage collect required amount of images. Attempted to free 70 bytes, but only found 0 bytes eligible to free.';
  assert.equal(events[1], `Warning FreeDiskSpaceFailed ${second}`);
  assert.equal(events[2], `Warning ImageGCFailed ${second}`);
  assert.equal(errors[0], `Image garbage collection failed once. Stats initialization may not have completed yet: ${message}`);
  assert.equal(errors[1], `Image garbage collection failed multiple times in a row: ${second}`);
  assert.deepEqual(state.removed, [A]);
});

test('pinned images, the runtime\'s sandbox image, --pod-infra-container-image and images of containers (running or exited) are never removed', async () => {
  const pinned = id('1'), sandbox = id('2'), infra = id('3'), running = id('4'), exited = id('5'), byTag = id('6'), free = id('7');
  const { gc, state, advance, now } = setup([
    { id: pinned, size: 10, pinned: true },
    { id: sandbox, size: 10, repoTags: ['registry.k8s.io/pause:3.9'] },
    { id: infra, size: 10, repoTags: ['docker.io/library/infra:latest'] },
    { id: running, size: 10 },
    { id: exited, size: 10 },
    { id: byTag, size: 10, repoTags: ['example.com/app:v1'] },
    { id: free, size: 10 },
  ], { minAgeMs: 0, maxAgeMs: 5 * MIN }, { sandboxImage: 'registry.k8s.io/pause:3.9', podInfra: 'infra' });
  const began = now();
  state.containers = [{ imageRef: running, state: 'CONTAINER_RUNNING' }, { imageRef: exited, state: 'CONTAINER_EXITED' }, { imageRef: 'example.com/app:v1', state: 'CONTAINER_CREATED' }];
  state.available = 0; // 100% used: everything eligible goes
  advance(10 * MIN);
  await assert.rejects(gc.garbageCollect(began), /Failed to garbage collect required amount of images/);
  assert.deepEqual(state.removed, [free]);
  await gc.deleteUnusedImages();
  assert.deepEqual(state.removed, [free]);
  const r = gc.imageRecords();
  assert.equal(r.get(pinned)!.pinned, true);
  assert.equal(r.get(sandbox)!.pinned, true);
  assert.equal(r.get(infra)!.pinned, true);
  assert.equal(r.get(running)!.lastUsed, now());
});

test('imageMaximumGCAge: once the kubelet has run longer than it, unused images not used for longer are removed whatever the disk use, before the threshold pass', async () => {
  const old = id('a'), recent = id('b'), never = id('c'), inUse = id('d');
  const { gc, state, events, advance, now } = setup([{ id: old, size: 10 }, { id: recent, size: 10 }, { id: never, size: 10 }, { id: inUse, size: 10 }], { maxAgeMs: 10 * MIN });
  const began = now();
  state.containers = [{ imageRef: old, state: 'CONTAINER_EXITED' }, { imageRef: inUse, state: 'CONTAINER_RUNNING' }];
  await gc.garbageCollect(began);
  state.containers = [{ imageRef: recent, state: 'CONTAINER_EXITED' }, { imageRef: inUse, state: 'CONTAINER_RUNNING' }];
  advance(6 * MIN);
  await gc.garbageCollect(began); // recent's last use: now
  state.containers = [{ imageRef: inUse, state: 'CONTAINER_RUNNING' }];
  advance(4 * MIN); // 10 minutes since the start: not longer than the maximum age yet
  await gc.garbageCollect(began);
  assert.deepEqual(state.removed, []);
  advance(1); // old last used 10m0.001s ago, never never used, recent 4m ago
  await gc.garbageCollect(began);
  assert.deepEqual(state.removed.sort(), [old, never].sort());
  assert.deepEqual(events, []);
  advance(6 * MIN);
  await gc.garbageCollect(began);
  assert.deepEqual(state.removed.sort(), [old, never, recent].sort());
  assert.ok(gc.imageRecords().has(inUse));
  // a failed removal is the kubelet's error
  const x = id('e');
  const s2 = setup([{ id: x, size: 10 }], { maxAgeMs: MIN }, { failRemove: new Set([x]) });
  const b2 = s2.now();
  s2.advance(2 * MIN);
  await assert.rejects(s2.gc.garbageCollect(b2), { message: `wanted to free images older than 1m0s, encountered errors in image deletion: rpc error: code = Unknown desc = cannot remove ${x}` });
});

test('the disk pass: failed removals give the kubelet\'s error after trying the others', async () => {
  const A = id('a'), B = id('b'), C = id('c');
  const { gc, state, advance, now } = setup([{ id: A, size: 10 }, { id: B, size: 10 }, { id: C, size: 10 }], { minAgeMs: 0 }, { failRemove: new Set([A, B]) });
  const began = now();
  await gc.detectImages(now());
  advance(MIN);
  state.available = 100;
  await assert.rejects(gc.garbageCollect(began), {
    message: `wanted to free 100 bytes, but freed 10 bytes space with errors in image deletion: [rpc error: code = Unknown desc = cannot remove ${A}, rpc error: code = Unknown desc = cannot remove ${B}]`,
  });
  assert.deepEqual(state.removed, [C]);
});

test('an image file system of no capacity: InvalidDiskCapacity', async () => {
  const { gc, state, events, now } = setup([]);
  state.capacity = 0;
  state.available = 0;
  await assert.rejects(gc.garbageCollect(now()), { message: 'invalid capacity 0 on image filesystem' });
  assert.deepEqual(events, ['Warning InvalidDiskCapacity invalid capacity 0 on image filesystem']);
});

test('a high threshold of 100 and no maximum age: the loop does not run', async () => {
  const A = id('a');
  const lines: string[] = [];
  const log: Logger = { ...nopLogger, v: () => ({ enabled: true, info: (msg) => lines.push(msg) }) };
  const { gc, state } = setup([{ id: A, size: 10 }], { highThresholdPercent: 100, minAgeMs: 0 }, { log, periodMs: 1 });
  state.available = 0;
  gc.start();
  await new Promise((r) => setTimeout(r, 30));
  await gc.stop();
  assert.deepEqual(state.removed, []);
  assert.ok(lines.includes('ImageGCHighThresholdPercent is set 100 and ImageMaximumGCAge is 0, Disable image GC'));
  assert.ok(gc.imageRecords().has(A), 'detection still runs');
});

test('deleteUnusedImages removes every unused image past the minimum age', async () => {
  const A = id('a'), B = id('b'), C = id('c');
  const { gc, state, advance, now } = setup([{ id: A, size: 10 }, { id: B, size: 10 }]);
  await gc.detectImages(now());
  state.images.push({ id: C, size: 10 });
  state.containers = [{ imageRef: B, state: 'CONTAINER_RUNNING' }];
  advance(2 * MIN);
  await gc.detectImages(now() - MIN);
  await gc.deleteUnusedImages();
  assert.deepEqual(state.removed, [A]);
});

test('the eviction manager deletes unused images under a nodefs or imagefs threshold, and evicts no pod when that suffices', async () => {
  const A = id('a');
  const { gc, state, advance, now } = setup([{ id: A, size: 300 }], { minAgeMs: 0 });
  await gc.detectImages(now());
  advance(MIN);
  const evicted: string[] = [];
  const events: string[] = [];
  const lines: string[] = [];
  const pods = [{ metadata: { name: 'p', namespace: 'ns', uid: 'u' }, spec: { containers: [{ name: 'c' }] } }];
  const make = (hard: Record<string, string>) => new EvictionManager({
    thresholds: parseEvictionThresholds({ evictionHard: hard, evictionSoft: {}, evictionSoftGracePeriod: {}, evictionMinimumReclaim: { 'nodefs.available': '100' } }),
    pressureTransitionPeriodMs: 60_000,
    maxPodGracePeriodSeconds: 5,
    rootDir: '/',
    sample: async () => ({ node: {} as any, containers: [] }),
    pods: { activePods: () => pods, evict: async (uid) => (evicted.push(uid), true) },
    nodeEvent: (type, reason, message) => events.push(`${type} ${reason} ${message}`),
    log: { ...nopLogger, info: (msg) => lines.push(msg) },
    deleteUnusedImages: () => gc.deleteUnusedImages(),
    observe: () => new Map<string, Observation>([['nodefs.available', { available: state.available, capacity: state.capacity }], ['memory.available', { available: 1000, capacity: 1000 }]]),
  });
  // 900 of 1000 available under a threshold of 950: A's 300 bytes make 1200 >= 950 + 100
  state.capacity = 2000;
  state.available = 900;
  const m = make({ 'nodefs.available': '950' });
  assert.equal(await m.synchronize(), undefined);
  assert.deepEqual(state.removed, [A]);
  assert.deepEqual(evicted, []);
  assert.deepEqual(events, ['Warning EvictionThresholdMet Attempting to reclaim ephemeral-storage']);
  assert.ok(lines.includes('Eviction manager: able to reduce resource pressure without evicting pods.'));
  // nothing more to delete: a pod is evicted
  state.available = 900;
  assert.equal(await m.synchronize(), 'ns/p');
  assert.deepEqual(evicted, ['u']);
  // a memory threshold deletes no image
  const B = id('b');
  state.images.push({ id: B, size: 10 });
  advance(MIN);
  await gc.detectImages(now() - MIN);
  const mm = new EvictionManager({
    thresholds: parseEvictionThresholds({ evictionHard: { 'memory.available': '2000' }, evictionSoft: {}, evictionSoftGracePeriod: {}, evictionMinimumReclaim: {} }),
    pressureTransitionPeriodMs: 60_000, maxPodGracePeriodSeconds: 5, rootDir: '/',
    sample: async () => ({ node: {} as any, containers: [] }),
    pods: { activePods: () => pods, evict: async () => true },
    nodeEvent: () => undefined, log: nopLogger,
    deleteUnusedImages: () => gc.deleteUnusedImages(),
    observe: () => new Map<string, Observation>([['memory.available', { available: 1000, capacity: 4000 }]]),
  });
  assert.equal(await mm.synchronize(), 'ns/p');
  assert.ok(!state.removed.includes(B));
});

test('image references are compared as the runtime names them', () => {
  assert.equal(normalizeImageRef('pause:3.9'), 'docker.io/library/pause:3.9');
  assert.equal(normalizeImageRef('busybox'), 'docker.io/library/busybox:latest');
  assert.equal(normalizeImageRef('me/app'), 'docker.io/me/app:latest');
  assert.equal(normalizeImageRef('registry.k8s.io/pause:3.9'), 'registry.k8s.io/pause:3.9');
  assert.equal(normalizeImageRef('localhost/app'), 'localhost/app:latest');
  assert.equal(normalizeImageRef('127.0.0.1:5000/app@sha256:' + 'a'.repeat(64)), '127.0.0.1:5000/app@sha256:' + 'a'.repeat(64));
});
