// What a durable create allocates, by function: V8's sampling heap profiler (one sample per 4 KiB
// allocated on average; every allocation counted, also those the collector has freed since, which
// a heap snapshot cannot show) in a Keelson under the creates load of `npm run bench` (64 clients,
// 1 KB ConfigMaps, bench/loadgen.ts), over the load generator's measured window, divided by the
// creates in it. Allocation sets how often the young generation is collected (bench/promotion.ts
// has what each collection costs; bench/heapdiff.ts what a create leaves alive). The profile is
// taken through heap-probe.ts, loaded into the server with --import.
//
//   node dist/bench/allocations.js [--warmup 6000] [--seconds 4] [--top 40] [--keep FILE]
//
// Prints one JSON document: bytes allocated per create in all, and by function (its own
// allocations, and with those of what it calls), compiled locations mapped to the TypeScript
// sources (bench/sources.ts); `--keep FILE` writes the profile (.heapprofile: Chrome DevTools opens it).
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchConfigMap, cliOption, onLines, round, startKeelson, stopChild } from './common.js';
import type { LoadConfig, LoadResult } from './loadgen.js';
import { label, type CallFrame } from './sources.js';

const here = dirname(fileURLToPath(import.meta.url));
const WARMUP_MS = Number(cliOption('warmup') ?? 6000);
const SECONDS = Number(cliOption('seconds') ?? 4);
const TOP = Number(cliOption('top') ?? 40);
const KEEP = cliOption('keep');

interface ProfileNode {
  callFrame: CallFrame;
  selfSize: number;
  children: ProfileNode[];
}

/** bytes allocated by each function itself, and by it and what it calls (a function counted once per path) */
export function allocationsByFunction(head: ProfileNode): { total: number; self: Map<string, number>; inclusive: Map<string, number> } {
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  const names = new Map<ProfileNode, string>();
  const name = (n: ProfileNode) => {
    let s = names.get(n);
    if (s === undefined) {
      const l = label(n.callFrame);
      s = l.where ? `${l.fn} ${l.where}` : l.fn;
      names.set(n, s);
    }
    return s;
  };
  const walk = (n: ProfileNode, onPath: Set<string>): number => {
    const nm = name(n);
    const fresh = !onPath.has(nm);
    if (fresh) onPath.add(nm);
    let sum = n.selfSize;
    for (const c of n.children) sum += walk(c, onPath);
    if (fresh) onPath.delete(nm);
    if (n.selfSize > 0) {
      self.set(nm, (self.get(nm) ?? 0) + n.selfSize);
      total += n.selfSize;
    }
    if (fresh) inclusive.set(nm, (inclusive.get(nm) ?? 0) + sum);
    return sum;
  };
  walk(head, new Set());
  return { total, self, inclusive };
}

const dir = mkdtempSync(join(tmpdir(), 'keelson-allocations-'));
const dataDir = join(dir, 'data');
const profilePath = join(dir, 'creates.heapprofile');
const { proc: server, target: t } = await startKeelson(dataDir, {
  nodeArgs: ['--import', pathToFileURL(join(here, 'heap-probe.js')).href],
  stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
}).catch((e) => {
  rmSync(dir, { recursive: true, force: true });
  throw e;
});
/** sends a message to the probe and waits for the answer that has `field` */
const ask = (msg: object, field: string) =>
  new Promise<unknown>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`the probe did not answer ${field} in 30 s`)), 30_000);
    const on = (m: unknown) => {
      const v = m && typeof m === 'object' ? (m as Record<string, unknown>)[field] : undefined;
      if (v === undefined) return;
      clearTimeout(timer);
      server.off('message', on);
      res(v);
    };
    server.on('message', on);
    server.send(msg);
  });
try {
  const cfg: LoadConfig = { ...t, method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: benchConfigMap('bench-__N__'), expectStatus: 201, concurrency: 64, warmupMs: WARMUP_MS, durationMs: SECONDS * 1000, maxRequests: 5_000_000 };
  process.stderr.write(`[allocations] ${WARMUP_MS} ms of warm-up, then ${SECONDS} s sampled\n`);
  // the profile spans the load generator's measured window: started at "warm", stopped at "end"
  const load = await new Promise<LoadResult>((res, rej) => {
    const lg = spawn(process.execPath, [join(here, 'loadgen.js'), JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let result: LoadResult | undefined;
    let stopped: Promise<unknown> = Promise.resolve();
    onLines(lg.stdout!, (line) => {
      if (line === 'warm') stopped = ask({ allocations: 'start' }, 'allocationsStarted');
      else if (line === 'end') stopped = stopped.then(() => ask({ allocations: profilePath }, 'allocationsWritten'));
      else if (line.startsWith('{')) result = JSON.parse(line) as LoadResult;
    });
    lg.once('exit', async (code) => {
      try {
        await stopped;
      } catch (e) {
        return rej(e);
      }
      if (code !== 0 || !result) rej(new Error(`loadgen exited with ${code}`));
      else res(result);
    });
  });
  if (KEEP) copyFileSync(profilePath, KEEP);
  const creates = load.perSec * SECONDS;
  const { total, self, inclusive } = allocationsByFunction((JSON.parse(readFileSync(profilePath, 'utf8')) as { head: ProfileNode }).head);
  const per = (bytes: number) => Math.round(bytes / creates);
  const top = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([fn, bytes]) => ({ bytesPerCreate: per(bytes), fn }));
  console.log(JSON.stringify({ creates, rate: load.perSec, bytesPerCreate: per(total), self: top(self), inclusive: top(inclusive), p99Ms: round(load.latencyMs.p99, 1) }, null, 2));
} finally {
  await stopChild(server, 20_000);
  rmSync(dir, { recursive: true, force: true });
}
