// Runs every compiled test file (dist/test/**/*.test.js) with Node's built-in test runner.
// Node 20's `--test` does not expand globs, so the files are listed here.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const filters = process.argv.slice(2);
function walk(dir, out) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}
let files = walk(join(root, 'dist', 'test'), []);
if (filters.length) files = files.filter((f) => filters.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error('no test files found under dist/test');
  process.exit(1);
}
const args = ['--test', '--test-concurrency=3'];
if (process.env.CI || !process.stdout.isTTY) args.push('--test-reporter=spec');
const r = spawnSync(process.execPath, [...args, ...files], { stdio: 'inherit', cwd: root });
process.exit(r.status ?? 1);
