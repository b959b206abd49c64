// What the young generation's collections cost a durable create, read from V8's own GC trace: the
// bytes each create leaves to be promoted into the old generation, and the scavenge time per create.
// Unlike a rate or a CPU time, the promoted bytes hardly move with the machine's other load (the
// same build measures within a few percent from run to run), so they compare builds and states on
// a noisy host.
//
//   node dist/bench/promotion.js [--pods N] [--lists M] [--creates N] [--dir DIR] [--flags "..."]
//
// It starts `keelson server` (DIR's build, default this checkout; fresh data directory, sqlite
// backend, a free port on 127.0.0.1) with `--trace-gc` and the node flags given, creates N Pods
// first if asked (the Pods of `npm run bench`'s list phase, 64 at a time), lists them M times, then
// runs the creates load of `npm run bench` (1 KB ConfigMaps, 64 clients, bench/loadgen.ts) for
// `--creates` requests, and reads the trace lines the main thread wrote during that load:
//   - promotedBytesPerCreate: the heap's growth from one scavenge to the next, summed, per create:
//     what entered the old generation, copied there by a scavenge or allocated there directly (as a
//     pretenured allocation site does); after a Mark-Compact the sum goes on from its result;
//   - scavengeUsPerCreate / avgScavengeMs: the main thread's scavenge pauses;
//   - markCompactUsPerCreate: the main thread's final pauses of full collections;
//   - fullGCs: each full collection's heap before and after and its final pause.
// Prints one JSON line. With `--pods 10000` it found that V8's allocation-site pretenuring, once
// Pods had been created, made every later ConfigMap create promote 7.0 KB instead of 2.5 KB
// (see src/cli/apiserver.ts, where the server turns it off once loaded).
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, statSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentFor, benchConfigMap, clientTLSFromKubeconfig, cliOption, createBenchPods, freePort, probe, procCPUSeconds, request, round, sleep, stopChild, type Target } from './common.js';
import type { LoadConfig, LoadResult } from './loadgen.js';

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(here, '..', '..');
const opt = cliOption;
const PODS = Number(opt('pods') ?? 0);
const LISTS = Number(opt('lists') ?? 0);
const CREATES = Number(opt('creates') ?? 30_000);
const DIR = resolve(opt('dir') ?? ROOT);
const FLAGS = (opt('flags') ?? '').split(' ').filter(Boolean);

/** one `--trace-gc` line: the isolate, the kind of collection, the heap before and after (MB), the pause (ms) */
interface GCLine {
  isolate: string;
  kind: 'Scavenge' | 'Mark-Compact';
  beforeMB: number;
  afterMB: number;
  pauseMs: number;
}

const GC_LINE = /^\[(\d+:0x[0-9a-f]+)\]\s+\d+ ms: (Scavenge|Mark-Compact)[^0-9]*([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, ([\d.]+) \//;

function parseTrace(text: string): GCLine[] {
  const out: GCLine[] = [];
  for (const line of text.split('\n')) {
    const m = GC_LINE.exec(line);
    if (m) out.push({ isolate: m[1]!, kind: m[2] as GCLine['kind'], beforeMB: Number(m[3]), afterMB: Number(m[4]), pauseMs: Number(m[5]) });
  }
  return out;
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(join(tmpdir(), 'keelson-promotion-'));
  const logFile = join(tmp, 'server.log');
  const fd = openSync(logFile, 'a');
  const port = await freePort();
  const argv = ['--trace-gc', ...FLAGS, join(DIR, 'bin', 'keelson'), 'server', '--data-dir', join(tmp, 'data'), '--secure-port', String(port), '--bind-address', '127.0.0.1'];
  const proc = spawn(process.execPath, argv, { cwd: DIR, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  try {
    const deadline = Date.now() + 30_000;
    while ((await probe(port, '/readyz')) !== 200) {
      if (proc.exitCode !== null) throw new Error(`keelson exited with ${proc.exitCode}`);
      if (Date.now() > deadline) throw new Error('keelson not ready in 30 s');
      await sleep(20);
    }
    const t: Target = { host: '127.0.0.1', port, servername: 'localhost', tls: clientTLSFromKubeconfig(join(tmp, 'data', 'kubeconfig')) };
    if (PODS > 0) {
      process.stderr.write(`[promotion] creating ${PODS} Pods\n`);
      await createBenchPods(t, PODS);
      const agent = agentFor(t, 1);
      try {
        for (let i = 0; i < LISTS; i++) {
          const r = await request(t, agent, 'GET', '/api/v1/namespaces/default/pods');
          if (r.status !== 200) throw new Error(`list pods: ${r.status}`);
        }
      } finally {
        agent.destroy();
      }
    }
    const from = statSync(logFile).size;
    process.stderr.write(`[promotion] ${CREATES} creates\n`);
    const cfg: LoadConfig = { ...t, method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: benchConfigMap('bench-__N__'), expectStatus: 201, concurrency: 64, warmupMs: 0, durationMs: 3_600_000, maxRequests: CREATES };
    const cpu0 = procCPUSeconds(proc.pid!);
    const result = await new Promise<LoadResult>((res, rej) => {
      const lg = spawn(process.execPath, [join(here, 'loadgen.js'), JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      lg.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      lg.once('exit', (code) => {
        const last = out.trim().split('\n').pop() ?? '';
        if (code === 0 && last.startsWith('{')) res(JSON.parse(last) as LoadResult);
        else rej(new Error(`loadgen exited with ${code}`));
      });
    });
    const cpu = procCPUSeconds(proc.pid!) - cpu0;
    const lines = parseTrace(readFileSync(logFile, 'utf8').slice(from));
    // the main thread's isolate collects the most; the storage worker's isolate has its own lines
    const counts = new Map<string, number>();
    for (const l of lines) counts.set(l.isolate, (counts.get(l.isolate) ?? 0) + 1);
    const main = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
    let scavenges = 0;
    let scavengeMs = 0;
    let promotedMB = 0;
    let markCompacts = 0;
    let markCompactMs = 0;
    const fullGCs: string[] = [];
    let prevAfter: number | undefined;
    for (const l of lines) {
      if (l.isolate !== main) continue;
      if (l.kind === 'Scavenge') {
        scavenges++;
        scavengeMs += l.pauseMs;
        if (prevAfter !== undefined) promotedMB += Math.max(0, l.afterMB - prevAfter);
      } else {
        markCompacts++;
        markCompactMs += l.pauseMs;
        fullGCs.push(`${l.beforeMB}->${l.afterMB} MB ${l.pauseMs} ms`);
      }
      prevAfter = l.afterMB;
    }
    const n = result.requests;
    console.log(
      JSON.stringify({
        build: DIR,
        nodeFlags: FLAGS,
        pods: PODS,
        lists: LISTS,
        creates: n,
        perSec: result.perSec,
        p99Ms: round(result.latencyMs.p99, 1),
        cpuUsPerCreate: Math.round((cpu * 1e6) / n),
        promotedBytesPerCreate: Math.round((promotedMB * 2 ** 20) / n),
        scavenges,
        scavengeUsPerCreate: round((scavengeMs * 1000) / n, 1),
        avgScavengeMs: round(scavengeMs / Math.max(1, scavenges), 2),
        markCompacts,
        markCompactUsPerCreate: round((markCompactMs * 1000) / n, 1),
        fullGCs,
      }),
    );
  } finally {
    await stopChild(proc);
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
