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
  // tsconfig.json alone only type-checks (a plain `tsc` writes nothing into dist/ but its own
  // dist/.typecheck.tsbuildinfo): the build is the one compile that emits, and its dist/.tsbuildinfo
  // is what bin/keelson compares the bundle with
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json'), '--noEmit', 'false', '--tsBuildInfoFile', join(root, 'dist', '.tsbuildinfo')], { stdio: 'inherit' });
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
// klog's call-site indexes: each compiled module's source map with checkpoints, so that a log line
// decodes a few lines of a map at run time, not the whole map (see LazyLineMap in src/cli/klog.ts)
try {
  const { LazyLineMap } = await import(join(root, 'dist', 'src', 'cli', 'klog.js'));
  const tables = (dir) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) tables(p);
      else if (name.endsWith('.js.map')) {
        const map = JSON.parse(readFileSync(p, 'utf8'));
        writeFileSync(p.slice(0, -'.map'.length) + '.lines', JSON.stringify(new LazyLineMap(map).index()));
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
// The bundle the keelson command runs (bin/keelson): the compiled modules joined by esbuild into a
// few files. Node.js 20 loads each ES module on its own (resolve, read, compile, link), and the API
// server's ~240 modules cost about 200 ms of every start that way (bench/run.ts's startup phase).
// Chunks are split at the command's dynamic imports, so `keelson patch` still does not load the API
// server. Files the modules find beside themselves (the schema declarations, the storage worker,
// the build facts) are placed beside the bundle too. Without esbuild (a production install) the
// command runs the modules themselves.
try {
  const esbuild = await import(createRequire(import.meta.url).resolve('esbuild'));
  const outdir = join(root, 'dist', 'bundle');
  rmSync(outdir, { recursive: true, force: true });
  await esbuild.build({
    entryPoints: { keelson: join(root, 'dist', 'src', 'cli', 'main.js'), 'sqlite-worker': join(root, 'dist', 'src', 'storage', 'sqlite-worker.js') },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // native addons stay in node_modules, and so does @peculiar/x509: loaded only for a CSR, by
    // Node's own CommonJS interop, which gives its exports as the modules expect them
    external: ['better-sqlite3', 'cbor-extract', '@peculiar/x509'],
    sourcemap: true,
    sourcesContent: false,
    // the CommonJS dependencies inside the bundle call require()
    banner: { js: "import { createRequire as __keelsonCreateRequire } from 'node:module'; const require = __keelsonCreateRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  cpSync(join(root, 'dist', 'src', 'schema', 'gen'), join(outdir, 'gen'), { recursive: true });
  // (the node agent's CRI declarations, found at ./cri/ beside the module that loads them)
  cpSync(join(root, 'dist', 'src', 'nodeagent', 'cri'), join(outdir, 'cri'), { recursive: true, filter: (f) => !/\.(js|map|lines|d\.ts)$/.test(f) });
  const buildInfo = join(root, 'dist', 'src', 'cli', 'buildinfo.json');
  if (existsSync(buildInfo)) cpSync(buildInfo, join(outdir, 'buildinfo.json'));
  const { LazyLineMap } = await import(join(root, 'dist', 'src', 'cli', 'klog.js'));
  for (const name of readdirSync(outdir)) {
    if (!name.endsWith('.js.map')) continue;
    const p = join(outdir, name);
    writeFileSync(p.slice(0, -'.map'.length) + '.lines', JSON.stringify(new LazyLineMap(JSON.parse(readFileSync(p, 'utf8'))).index()));
  }
} catch (e) {
  if (e?.code === 'ERR_MODULE_NOT_FOUND' || e?.code === 'MODULE_NOT_FOUND') console.error('build: esbuild is not installed; the keelson command will run the modules unbundled');
  else {
    console.error(`build: could not bundle the keelson command: ${e.message}`);
    failed = true;
  }
  rmSync(join(root, 'dist', 'bundle'), { recursive: true, force: true });
}
if (failed) process.exit(1);
