// What the creates load leaves alive: two heap snapshots of a Keelson server under the creates load
// of `npm run bench` (64 clients, 1 KB ConfigMaps), a moment apart, and the objects of the second
// that the first did not have, by kind, with the ConfigMaps created in between. Every object a
// scavenge copies is among them (the objects allocated since the last collection that are still
// reachable), so this says what makes the young generation's survivors: what each create keeps
// (the watch cache's entries) and what the requests in flight hold.
//
//   node dist/bench/heapdiff.js [--warmup ms] [--gap ms] [--top n] [--keep dir]
//
// --warmup (default 4000): load before the first snapshot; --gap (default 200): load between the
// two (a snapshot stops the server for a second or more, and the load resumes after it); --top
// (default 40): the kinds listed; --keep: write the snapshots there and keep them (Chrome DevTools
// opens them; its Comparison view is the same question asked by hand). Native and synthetic
// nodes (their ids are not stable between snapshots) are left out. Prints one JSON document.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchConfigMap, clientTLSFromKubeconfig, freePort, probe, round, sleep, stopChild } from './common.js';
import type { LoadConfig } from './loadgen.js';

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(here, '..', '..');
const args = process.argv.slice(2);
const opt = (name: string, dflt: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : dflt;
};
const WARMUP_MS = Number(opt('warmup', '4000'));
const GAP_MS = Number(opt('gap', '200'));
const TOP = Number(opt('top', '40'));
const KEEP = args.includes('--keep') ? opt('keep', '') : '';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** a heap snapshot file (its nodes, as flat arrays described by snapshot.meta) */
function read(path: string): Snapshot {
  return JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
}

/** the nodes of b whose ids a does not have, by type and name; `created`: new ConfigMap names */
function diff(a: Snapshot, b: Snapshot) {
  const f = b.snapshot.meta.node_fields;
  const width = f.length;
  const [iType, iName, iId, iSize] = ['type', 'name', 'id', 'self_size'].map((n) => f.indexOf(n)) as [number, number, number, number];
  const types = b.snapshot.meta.node_types[0];
  const before = new Set<number>();
  for (let i = 0; i < a.nodes.length; i += width) before.add(a.nodes[i + iId]!);
  const byKind = new Map<string, { bytes: number; count: number }>();
  let bytes = 0;
  let count = 0;
  let created = 0;
  for (let i = 0; i < b.nodes.length; i += width) {
    if (before.has(b.nodes[i + iId]!)) continue;
    const type = types[b.nodes[i + iType]!]!;
    if (type === 'native' || type === 'synthetic') continue;
    let name = b.strings[b.nodes[i + iName]!] ?? '';
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') {
      if (name.startsWith('bench-') && type === 'string') created++;
      name = name.length > 100 ? '(over 100 characters)' : name.length > 30 ? '(31 to 100 characters)' : '(up to 30 characters)';
    }
    const kind = `${type}: ${name.slice(0, 60)}`;
    const size = b.nodes[i + iSize]!;
    const e = byKind.get(kind) ?? { bytes: 0, count: 0 };
    e.bytes += size;
    e.count++;
    byKind.set(kind, e);
    bytes += size;
    count++;
  }
  return { bytes, count, created, byKind };
}

async function main() {
  const dir = KEEP || mkdtempSync(join(tmpdir(), 'keelson-heapdiff-'));
  const dataDir = join(dir, 'data');
  const port = await freePort();
  const probeURL = pathToFileURL(join(here, 'heap-probe.js')).href;
  const server = spawn(process.execPath, ['--import', probeURL, join(ROOT, 'bin', 'keelson'), 'server', '--data-dir', dataDir, '--secure-port', String(port), '--bind-address', '127.0.0.1'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  });
  let load: ReturnType<typeof spawn> | undefined;
  try {
    const deadline = Date.now() + 30_000;
    while ((await probe(port, '/readyz')) !== 200) {
      if (server.exitCode !== null || Date.now() > deadline) throw new Error('keelson did not become ready');
      await sleep(10);
    }
    const snapshot = (path: string) =>
      new Promise<string>((res, rej) => {
        const timer = setTimeout(() => rej(new Error('no snapshot in 60 s')), 60_000);
        const on = (m: unknown) => {
          const w = m && typeof m === 'object' ? (m as { snapshotWritten?: unknown }).snapshotWritten : undefined;
          if (typeof w !== 'string') return;
          clearTimeout(timer);
          server.off('message', on);
          res(w);
        };
        server.on('message', on);
        server.send({ snapshot: path });
      });
    const t = { host: '127.0.0.1', port, servername: 'localhost', tls: clientTLSFromKubeconfig(join(dataDir, 'kubeconfig')) };
    const cfg: LoadConfig = { ...t, method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: benchConfigMap('bench-__N__'), expectStatus: 201, concurrency: 64, warmupMs: WARMUP_MS, durationMs: 120_000, maxRequests: 2_000_000 };
    load = spawn(process.execPath, [join(here, 'loadgen.js'), JSON.stringify(cfg)], { stdio: 'ignore' });
    await sleep(WARMUP_MS);
    const a = await snapshot(join(dir, 'a.heapsnapshot'));
    await sleep(GAP_MS);
    const b = await snapshot(join(dir, 'b.heapsnapshot'));
    load.kill('SIGTERM');
    const d = diff(read(a), read(b));
    const per = (x: number) => (d.created > 0 ? round(x / d.created, 1) : null);
    const kinds = [...d.byKind].sort((x, y) => y[1].bytes - x[1].bytes).slice(0, TOP);
    process.stdout.write(
      JSON.stringify(
        {
          note: 'objects in the second snapshot and not in the first (both taken after a full collection), native and synthetic nodes left out; created: ConfigMap names new in the second; per create: divided by it',
          warmupMs: WARMUP_MS,
          gapMs: GAP_MS,
          created: d.created,
          newObjects: d.count,
          newBytes: d.bytes,
          newBytesPerCreate: per(d.bytes),
          kinds: kinds.map(([kind, e]) => ({ kind, bytes: e.bytes, count: e.count, bytesPerCreate: per(e.bytes) })),
          snapshots: KEEP ? [a, b] : undefined,
        },
        null,
        2,
      ) + '\n',
    );
  } finally {
    load?.kill('SIGTERM');
    await stopChild(server, 20_000);
    if (!KEEP) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
