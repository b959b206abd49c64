// The kubelet's image pull throttling (src/nodeagent/imagepulls.ts): serial pulls, the parallel
// limit, and the registry QPS bucket that fails pulls past it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ImagePulls } from '../../src/nodeagent/imagepulls.js';

function pulls() {
  let running = 0;
  let most = 0;
  const release: (() => void)[] = [];
  const pull = () =>
    new Promise<string>((resolve) => {
      running++;
      most = Math.max(most, running);
      release.push(() => {
        running--;
        resolve('ref');
      });
    });
  return { pull, most: () => most, release: () => release.shift()?.(), pending: () => release.length };
}

const tick = () => new Promise((r) => setImmediate(r));

test('serialized pulls run one at a time; parallel ones up to maxParallelImagePulls', async () => {
  for (const [o, expected] of [
    [{ serialize: true, qps: 0, burst: 10, maxParallel: 0 }, 1],
    [{ serialize: false, qps: 0, burst: 10, maxParallel: 2 }, 2],
    [{ serialize: false, qps: 0, burst: 10, maxParallel: 0 }, 5],
  ] as const) {
    const p = pulls();
    const q = new ImagePulls(o);
    const all = Array.from({ length: 5 }, () => q.run(p.pull));
    for (let i = 0; i < 5; i++) {
      await tick();
      p.release();
    }
    for (let i = 0; i < 10 && p.pending(); i++) {
      await tick();
      p.release();
    }
    assert.deepEqual(await Promise.all(all), ['ref', 'ref', 'ref', 'ref', 'ref']);
    assert.equal(p.most(), expected, JSON.stringify(o));
  }
});

test('registryPullQPS: pulls beyond the burst fail at once with "pull QPS exceeded"', async () => {
  const q = new ImagePulls({ serialize: false, qps: 1, burst: 2, maxParallel: 0 });
  const results = await Promise.allSettled([1, 2, 3].map(() => q.run(async () => 'ref')));
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'rejected']);
  assert.equal((results[2] as PromiseRejectedResult).reason.message, 'pull QPS exceeded');
});
