// Two Keelsons side by side, one load alternated between them: an A/B comparison of two builds
// (or of two sets of node flags or environment variables) that holds up on a noisy machine.
//
//   node dist/bench/duel.js [--rounds 8] [--a DIR] [--b DIR] [--a-flags "..."] [--b-flags "..."]
//                           [--a-env "K=V ..."] [--b-env "K=V ..."] [--a-args "..."] [--b-args "..."]
//                           [--warmup ms] [--duration ms]
//                           [--a-preload N] [--b-preload N] [--pods N] [--a-pods N] [--b-pods N]
//
// --a-preload/--b-preload N first create N more 1 KB ConfigMaps in that server (in namespace
// `preload`, as fast as the load generator goes), so that the duel also shows what a larger store
// costs a create: the watch cache, the heap and the database hold N more objects. --pods N first
// creates N Pods in both servers (the Pods of `npm run bench`'s list phase, which it creates before
// its creates phase): the create path has then served two kinds, as in a real cluster, and V8's
// optimizations and allocation decisions are those of that state, not of ConfigMaps alone.
// --a-pods/--b-pods N set that number for one side (e.g. --a-pods 200 --b-pods 10000: both have
// served Pods, one holds 10,000 of them: what holding them costs a create).
//
// DIR is a checkout with a build (default: this one). Both servers run for the whole duel on
// fresh data directories; each round measures A then B (B then A in odd rounds) with the
// creates load of `npm run bench` (64 clients, 1 KB ConfigMaps, bench/loadgen.ts), and reads each
// server's CPU time around its measured window. Rates of consecutive `npm run bench` runs move
// 20% or more with the machine's other load; two servers measured in alternating windows of a
// few seconds see the same machine, so their medians compare. Prints one JSON document: per
// round rates, p99 and server CPU per create, and the medians.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchConfigMap, cliOption, createBenchPods, loadWithServerCPU, median, request, round, startKeelson, stopChild, type Target } from './common.js';
import type { LoadConfig } from './loadgen.js';

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(here, '..', '..');
const opt = cliOption;
const ROUNDS = Number(opt('rounds') ?? 8);
const WARMUP_MS = Number(opt('warmup') ?? 700);
const DURATION_MS = Number(opt('duration') ?? 2500);
const PODS = Number(opt('pods') ?? 0);

interface Side {
  label: string;
  dir: string;
  flags: string[];
  env: Record<string, string>;
  /** more arguments of `keelson server` (e.g. --storage-backend=memory) */
  args: string[];
  proc?: ChildProcess;
  target?: Target;
  preload: number;
  pods: number;
  rounds: { perSec: number; p99Ms: number; cpuUsPerCreate: number }[];
}

function side(name: 'a' | 'b'): Side {
  const dir = resolve(opt(name) ?? ROOT);
  const flags = (opt(`${name}-flags`) ?? '').split(' ').filter(Boolean);
  const env: Record<string, string> = {};
  for (const kv of (opt(`${name}-env`) ?? '').split(' ').filter(Boolean)) env[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
  const args = (opt(`${name}-args`) ?? '').split(' ').filter(Boolean);
  const preload = Number(opt(`${name}-preload`) ?? 0);
  const pods = Number(opt(`${name}-pods`) ?? PODS);
  const label = [dir, ...flags, ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...args, ...(preload ? [`preload=${preload}`] : []), ...(pods ? [`pods=${pods}`] : [])].join(' ');
  return { label, dir, flags, env, args, preload, pods, rounds: [] };
}

async function start(s: Side, dataDir: string): Promise<void> {
  const k = await startKeelson(dataDir, { nodeArgs: s.flags, dir: s.dir, env: s.env, args: s.args, label: `keelson (${s.label})` });
  s.proc = k.proc;
  s.target = k.target;
}

const BODY = benchConfigMap('bench-__N__');

/** creates s.preload ConfigMaps in namespace `preload` (unmeasured) */
async function preload(s: Side): Promise<void> {
  if (!s.preload) return;
  const t = s.target!;
  const ns = await request(t, undefined, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'preload' } }));
  if (ns.status !== 201) throw new Error(`POST namespace preload: ${ns.status}`);
  const cfg: LoadConfig = { ...t, method: 'POST', path: '/api/v1/namespaces/preload/configmaps', body: benchConfigMap('pre-__N__'), expectStatus: 201, concurrency: 64, warmupMs: 0, durationMs: 3_600_000, maxRequests: s.preload };
  await new Promise<void>((res, rej) => {
    const lg = spawn(process.execPath, [join(here, 'loadgen.js'), JSON.stringify(cfg)], { stdio: ['ignore', 'ignore', 'inherit'] });
    lg.once('exit', (code) => (code === 0 ? res() : rej(new Error(`preload: loadgen exited with ${code}`))));
  });
}

/** one measured window of creates against s; the server's CPU is read when the load generator says "warm" and "end" */
async function measure(s: Side): Promise<void> {
  const t = s.target!;
  const cfg: LoadConfig = { ...t, method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: BODY, expectStatus: 201, concurrency: 64, warmupMs: WARMUP_MS, durationMs: DURATION_MS, maxRequests: 2_000_000 };
  const { load, cpuUsPerRequest } = await loadWithServerCPU(cfg, s.proc!.pid!);
  s.rounds.push({ perSec: load.perSec, p99Ms: round(load.latencyMs.p99, 1), cpuUsPerCreate: cpuUsPerRequest });
}

const a = side('a');
const b = side('b');
const tmp = mkdtempSync(join(tmpdir(), 'keelson-duel-'));
try {
  await start(a, join(tmp, 'a'));
  await start(b, join(tmp, 'b'));
  for (const s of [a, b]) {
    if (s.pods) process.stderr.write(`[duel] creating ${s.pods} Pods in ${s === a ? 'A' : 'B'}\n`);
    if (s.pods) await createBenchPods(s.target!, s.pods);
    if (s.preload) process.stderr.write(`[duel] preloading ${s.preload} ConfigMaps into ${s === a ? 'A' : 'B'}\n`);
    await preload(s);
  }
  for (let i = 0; i < ROUNDS; i++) {
    process.stderr.write(`[duel] round ${i + 1}/${ROUNDS}\n`);
    for (const s of i % 2 ? [b, a] : [a, b]) await measure(s);
  }
  // the first round of each is a warm-up (JIT, heap growth): the medians leave it out
  const summary = (s: Side) => {
    const rs = s.rounds.slice(1);
    return { label: s.label, medianPerSec: median(rs.map((r) => r.perSec)), medianCpuUsPerCreate: median(rs.map((r) => r.cpuUsPerCreate)), medianP99Ms: median(rs.map((r) => r.p99Ms)), rounds: s.rounds };
  };
  const sa = summary(a);
  const sb = summary(b);
  console.log(JSON.stringify({ a: sa, b: sb, bOverA: { perSec: round(sb.medianPerSec / sa.medianPerSec, 3), cpuUsPerCreate: round(sb.medianCpuUsPerCreate / sa.medianCpuUsPerCreate, 3) } }, null, 2));
} finally {
  await Promise.all([stopChild(a.proc), stopChild(b.proc)]);
  rmSync(tmp, { recursive: true, force: true });
}
