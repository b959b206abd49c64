// The keelson command runs the esbuild bundle the build writes (dist/bundle), and falls back to
// the compiled modules with KEELSON_UNBUNDLED=1 (or a bundle older than the last compile): both
// serve kubectl the same, and log lines name the TypeScript sources either way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { KEELSON, ROOT, startCluster, until } from './harness.js';

const BUNDLE = join(ROOT, 'dist', 'bundle', 'keelson.js');
const skip = existsSync(BUNDLE) ? false : 'no bundle was built (esbuild is not installed)';

for (const [name, env, bundled] of [
  ['the bundle (default)', {}, true],
  ['the compiled modules (KEELSON_UNBUNDLED=1)', { KEELSON_UNBUNDLED: '1' }, false],
] as const) {
  test(`${name}: serves kubectl, logs from the TypeScript sources`, { skip }, async () => {
    const c = await startCluster({ args: ['-v=1'], env });
    try {
      assert.match(c.logs, new RegExp(`"Command" bundle=${bundled}`));
      // the klog header names the source file of the call, through the source map (the line can
      // reach this process's pipe a moment after /readyz answers: the server is ready first)
      const serving = /apiserver\.ts:\d+\] Serving securely on 127\.0\.0\.1:\d+$/m;
      await until('the "Serving securely" line', () => serving.test(c.logs), 10_000).catch(() => undefined);
      assert.match(c.logs, serving);
      const r = c.kubectl(['get', 'ns', 'kube-system', '-o', 'name']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), 'namespace/kube-system');
    } finally {
      await c.stop();
    }
  });
}

test('keelson --version and patch --help read the same from both', { skip }, () => {
  for (const args of [['--version'], ['patch', '--help']]) {
    const a = spawnSync(process.execPath, [KEELSON, ...args], { encoding: 'utf8' });
    const b = spawnSync(process.execPath, [KEELSON, ...args], { encoding: 'utf8', env: { ...process.env, KEELSON_UNBUNDLED: '1' } });
    assert.equal(a.status, 0, a.stderr);
    assert.equal(a.stdout, b.stdout);
    assert.equal(a.status, b.status);
  }
});
