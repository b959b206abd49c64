// Randomized robustness probes of a real keelson: not tests (they are random and take minutes),
// but the tool that found, in one session, a hang (HEAD of a watch), two ways to end the server
// process (a deep YAML apply body, a Warning header it could not send), 500s for bad patches and
// deep bodies, and spurious 409/404 answers to concurrent writes. Each probe starts its own
// keelson (`npm run build` first) on a free 127.0.0.1 port with a fresh data directory, drives it,
// prints what it found, and stops it; the exit code is 1 when any probe reports a problem.
//
//   node scripts/probe.mjs [probe ...] [--seed N] [--count N] [--h2]
//
// Probes (all when none is named):
//   requests    random methods, paths, query parameters, media types and bodies (--h2: over HTTP/2):
//               no answer may be a 5xx (but 503/504), an error must be a Status, none may hang
//   objects     an object of every built-in kind, mutated (wrong types, removed and unknown fields),
//               sent by every write verb and patch type: no 5xx
//   protobuf    the same objects in Protobuf, their bytes flipped, inserted, cut: no 5xx, no hang
//   cbor        the same in CBOR (the CBORServingAndStorage gate on), also as apply-patch+cbor
//   writes      eight clients creating, replacing, patching, applying and deleting three objects at
//               once while a watch records every event: only 404/409 where Kubernetes answers them,
//               and the last event of each object is the object
//   pages       paged lists under concurrent writes: every page at one resourceVersion, the pages
//               together the exact list at it
//   namespaces  namespaces deleted while objects are created in them: none left behind
//   customresources  a custom resource with a rich schema, its objects mutated and sent by every
//               write, then listed in every form: no 5xx
//   deletes     concurrent creates, deletes (odd options, dry runs, collections) and finalizer
//               changes: no 5xx, and nothing left once the finalizers are removed
//   watches     thirty watches (selectors, resourceVersions, streaming lists) under writes, some
//               cut off: each stream ends in the live state it selects, in revision order
//   subresources  scale, binding, eviction, token, ephemeral containers and status with values
//               of the wrong type: no 5xx
//
// The server's own log is checked too: an "Unhandled" error line or a process that died counts.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
// each probe: its module in probe/ and the function there
const PROBES = {
  requests: ['requests.mjs', 'run'],
  objects: ['objects.mjs', 'run'],
  protobuf: ['binary.mjs', 'runProtobuf'],
  cbor: ['binary.mjs', 'runCBOR'],
  writes: ['writes.mjs', 'run'],
  pages: ['pages.mjs', 'run'],
  namespaces: ['namespaces.mjs', 'run'],
  customresources: ['customresources.mjs', 'run'],
  deletes: ['deletes.mjs', 'run'],
  watches: ['watches.mjs', 'run'],
  subresources: ['subresources.mjs', 'run'],
};

const args = process.argv.slice(2);
const named = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && ['--seed', '--count'].includes(args[i - 1])));
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
for (const n of named) {
  if (!(n in PROBES)) {
    process.stderr.write(`probe: unknown probe ${n} (probes: ${Object.keys(PROBES).join(', ')})\n`);
    process.exit(2);
  }
}
if (!existsSync(join(ROOT, 'dist', 'bench', 'common.js'))) {
  process.stderr.write('probe: not built yet; run `npm run build` first\n');
  process.exit(2);
}
const seed = Number(opt('--seed') ?? 1);
const count = opt('--count') !== undefined ? Number(opt('--count')) : undefined;

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function withKeelson(extraArgs, fn) {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'keelson-probe-'));
  const proc = spawn(process.execPath, [join(ROOT, 'bin', 'keelson'), 'server', '--data-dir', dir, '--secure-port', String(port), '--bind-address', '127.0.0.1', ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  let logs = '';
  proc.stdout.on('data', (d) => (logs += d));
  proc.stderr.on('data', (d) => (logs += d));
  const kubeconfig = join(dir, 'kubeconfig');
  try {
    for (let i = 0; i < 300 && !logs.includes('Keelson is ready'); i++) {
      if (proc.exitCode !== null) throw new Error(`keelson exited during start:\n${logs}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const result = await fn({ port, kubeconfig });
    let problems = result.problems;
    if (proc.exitCode !== null) {
      console.log(`keelson died (exit ${proc.exitCode}):\n${logs.slice(-3000)}`);
      problems++;
    }
    const unhandled = logs.split('\n').filter((l) => /Unhandled|FATAL/.test(l));
    if (unhandled.length) {
      console.log(`keelson logged ${unhandled.length} unhandled error(s):\n${unhandled.slice(0, 5).join('\n')}`);
      problems += unhandled.length;
    }
    return problems;
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => (proc.exitCode !== null ? r() : proc.once('exit', r)));
    rmSync(dir, { recursive: true, force: true });
  }
}

let total = 0;
for (const name of named.length ? named : Object.keys(PROBES)) {
  const [file, fn] = PROBES[name];
  const mod = await import(new URL(`./probe/${file}`, import.meta.url).href);
  const extra = name === 'cbor' || name === 'customresources' ? ['--feature-gates=CBORServingAndStorage=true'] : [];
  process.stderr.write(`probe: ${name} (seed ${seed})\n`);
  const problems = await withKeelson(extra, ({ port, kubeconfig }) => mod[fn]({ port, kubeconfig, seed, count, h2: args.includes('--h2') }));
  process.stderr.write(`probe: ${name}: ${problems} problem(s)\n`);
  total += problems;
}
process.exit(total > 0 ? 1 : 0);
