// A pod's local storage figures (nodeagent/ephemeral.ts, diskusage.ts): what its volumes, logs and
// containers' writable layers take, the volumes measured once per volumeStatsAggPeriod.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diskUsage } from '../../src/nodeagent/diskusage.js';
import { LocalStorageStats } from '../../src/nodeagent/ephemeral.js';

const KB = 1024;

test('diskUsage: blocks of files and directories, a file with two links once, symbolic links not followed; nothing for a missing path', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-du-'));
  try {
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'a'), Buffer.alloc(64 * KB, 1));
    linkSync(join(dir, 'sub', 'a'), join(dir, 'b'));
    symlinkSync('/usr', join(dir, 'link'));
    const u = await diskUsage(dir);
    assert.equal(u.inodesUsed, 4, 'the directory, sub, the file (once), the link');
    assert.ok(u.usedBytes >= 64 * KB && u.usedBytes < 256 * KB, String(u.usedBytes));
    assert.deepEqual(await diskUsage(join(dir, 'none')), { usedBytes: 0, inodesUsed: 0 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('LocalStorageStats: volumes, logs, writable layers and etc-hosts; the local ephemeral volumes alone count in the total; volumes measured again after the period', async () => {
  const root = mkdtempSync(join(tmpdir(), 'keelson-eph-'));
  try {
    const pod = {
      metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
      spec: {
        containers: [{ name: 'main' }],
        volumes: [{ name: 'scratch', emptyDir: {} }, { name: 'mem', emptyDir: { medium: 'Memory' } }, { name: 'cfg', configMap: { name: 'c' } }, { name: 'tok', secret: { secretName: 's' } }],
      },
    };
    const vol = (plugin: string, name: string) => join(root, 'pods', 'u1', 'volumes', plugin, name);
    for (const [plugin, name, kb] of [['kubernetes.io~empty-dir', 'scratch', 100], ['kubernetes.io~empty-dir', 'mem', 200], ['kubernetes.io~configmap', 'cfg', 8], ['kubernetes.io~secret', 'tok', 8]] as const) {
      mkdirSync(vol(plugin, name), { recursive: true });
      writeFileSync(join(vol(plugin, name), 'f'), Buffer.alloc(kb * KB, 1));
    }
    writeFileSync(join(root, 'pods', 'u1', 'etc-hosts'), '127.0.0.1 localhost\n');
    const logs = join(root, 'logs', 'ns_p_u1', 'main');
    mkdirSync(logs, { recursive: true });
    writeFileSync(join(logs, '0.log'), Buffer.alloc(40 * KB, 1));
    let now = 0;
    const cri = { listContainerStats: async () => [{ attributes: { metadata: { name: 'main' } }, writableLayer: { usedBytes: { value: 300 * KB } } }] as any[] };
    const stats = new LocalStorageStats({ rootDir: root, podLogsDir: join(root, 'logs'), cri, volumeStatsAggPeriodMs: 1000, now: () => now });
    const s = await stats.podStorage(pod);
    const used = Object.fromEntries(s.volumes.map((v) => [v.name, v.usedBytes]));
    assert.ok(used.scratch! >= 100 * KB && used.mem! >= 200 * KB && used.cfg! >= 8 * KB && used.tok! >= 8 * KB, JSON.stringify(used));
    assert.deepEqual(s.containers.map((c) => [c.name, c.rootfsBytes, c.logsBytes >= 40 * KB]), [['main', 300 * KB, true]]);
    // scratch and cfg (not the Memory emptyDir, not the secret), the writable layer, the logs, etc-hosts
    const expected = used.scratch! + used.cfg! + 300 * KB + s.containers[0]!.logsBytes;
    assert.ok(s.ephemeralBytes >= expected && s.ephemeralBytes <= expected + 8 * KB, `${s.ephemeralBytes} vs ${expected}`);
    // within the period the volumes are not measured again; after it they are
    writeFileSync(join(vol('kubernetes.io~empty-dir', 'scratch'), 'g'), Buffer.alloc(100 * KB, 1));
    now = 500;
    assert.equal((await stats.podStorage(pod)).volumes.find((v) => v.name === 'scratch')!.usedBytes, used.scratch);
    now = 1000;
    assert.ok((await stats.podStorage(pod)).volumes.find((v) => v.name === 'scratch')!.usedBytes >= 200 * KB);
    // a negative period: no volume figures
    const off = new LocalStorageStats({ rootDir: root, podLogsDir: join(root, 'logs'), cri, volumeStatsAggPeriodMs: -1 });
    assert.deepEqual((await off.podStorage(pod)).volumes, []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
