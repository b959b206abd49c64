// Build: type-check and compile with tsc, then copy the data files tsc does not emit
// (the generated schema declarations) beside the compiled modules that read them.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, mkdirSync, writeFileSync } from 'node:fs';
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

// a test whose source is gone must not run from a stale compiled file (tsc never deletes outputs)
function dropStaleTests(dir) {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const name = e.name;
    const p = join(dir, name);
    if (e.isDirectory()) dropStaleTests(p);
    else if (name.endsWith('.test.js')) {
      const src = join(root, p.slice(join(root, 'dist').length + 1)).replace(/\.js$/, '.ts');
      if (!existsSync(src)) for (const ext of ['', '.map', '.lines']) rmSync(p + ext, { force: true });
    }
  }
}
dropStaleTests(join(root, 'dist', 'test'));

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
// klog's call-site tables: each compiled module's source map decoded once here, so that a log
// line does not decode a map at run time (see LazyLineMap in src/cli/klog.ts)
try {
  const { LazyLineMap } = await import(join(root, 'dist', 'src', 'cli', 'klog.js'));
  const tables = (dir) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) tables(p);
      else if (name.endsWith('.js.map')) {
        const map = JSON.parse(readFileSync(p, 'utf8'));
        writeFileSync(p.slice(0, -'.map'.length) + '.lines', JSON.stringify(new LazyLineMap(map).table()));
      }
    }
  };
  tables(join(root, 'dist', 'src'));
} catch (e) {
  console.error(`build: could not write the call-site tables: ${e.message}`);
}
// the build facts /version reports (commit, clean or dirty tree, build date)
try {
  const v = await import(join(root, 'dist', 'src', 'cli', 'version.js'));
  await v.writeBuildInfo();
} catch (e) {
  console.error(`build: could not record build info: ${e.message}`);
}
if (failed) process.exit(1);
