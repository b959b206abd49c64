// Build: type-check and compile with tsc, then copy the data files tsc does not emit
// (the generated schema declarations) beside the compiled modules that read them.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, statSync, mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
let failed = false;
try {
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { stdio: 'inherit' });
} catch {
  failed = true; // tsc still emitted; copy the data files anyway, then report the failure
}

function copyData(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) copyData(p);
    else if (/\.(json|bin|proto)$/.test(name)) {
      const out = join(root, 'dist', p.slice(root.length + 1));
      mkdirSync(dirname(out), { recursive: true });
      cpSync(p, out);
    }
  }
}
if (existsSync(join(root, 'src'))) copyData(join(root, 'src'));
// the build facts /version reports (commit, clean or dirty tree, build date)
try {
  const v = await import(join(root, 'dist', 'src', 'cli', 'version.js'));
  await v.writeBuildInfo();
} catch (e) {
  console.error(`build: could not record build info: ${e.message}`);
}
if (failed) process.exit(1);
