// What node:http's JavaScript costs a request: the bare server's POST echo (bench/bare.ts, on
// node:https) beside the same echo without node:http's request and response objects
// (bench/lean-echo.ts: the same TLS setup and native parser, the answer written as one head and
// one body), under the creates load of `npm run bench` (64 clients, 1 KB ConfigMap bodies,
// bench/loadgen.ts), in alternating rounds. Each round reads the server's CPU time around the
// measured window. Prints one JSON document: per round rate and server CPU per request, and the
// medians. A Keelson is started first only for its certificates (the bare server's are Keelson's).
//
//   node dist/bench/echoes.js [--rounds 6] [--duration 3000]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchConfigMap, clientTLSFromKubeconfig, cliOption, freePort, loadWithServerCPU, median, round, startKeelson, stopChild, untilLine, type Target } from './common.js';
import type { LoadConfig } from './loadgen.js';

const here = dirname(fileURLToPath(import.meta.url));
const opt = cliOption;
const ROUNDS = Number(opt('rounds') ?? 6);
const DURATION_MS = Number(opt('duration') ?? 3000);

interface Echo {
  name: string;
  proc?: ChildProcess;
  target?: Target;
  rounds: { perSec: number; cpuUsPerRequest: number; p99Ms: number }[];
}

async function startEcho(e: Echo, script: string, pki: string, tls: Target['tls']): Promise<void> {
  const port = await freePort();
  const proc = spawn(process.execPath, [join(here, script), String(port), join(pki, 'apiserver.crt'), join(pki, 'apiserver.key'), join(pki, 'ca.crt')], { stdio: ['ignore', 'pipe', 'ignore'] });
  e.proc = proc;
  await untilLine(proc, 'listening', 10_000, script);
  e.target = { host: '127.0.0.1', port, servername: 'localhost', tls };
}

async function measure(e: Echo): Promise<void> {
  const cfg: LoadConfig = { ...e.target!, method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: benchConfigMap('bench-__N__'), expectStatus: 201, concurrency: 64, warmupMs: 1000, durationMs: DURATION_MS, maxRequests: 5_000_000 };
  const { load, cpuUsPerRequest } = await loadWithServerCPU(cfg, e.proc!.pid!, true);
  e.rounds.push({ perSec: load.perSec, cpuUsPerRequest, p99Ms: round(load.latencyMs.p99, 1) });
}

const dir = mkdtempSync(join(tmpdir(), 'keelson-echoes-'));
const nodeHttp: Echo = { name: 'node:https (bench/bare.ts)', rounds: [] };
const lean: Echo = { name: 'native parser only (bench/lean-echo.ts)', rounds: [] };
let keelson: ChildProcess | undefined;
try {
  // Keelson makes the certificates
  const dataDir = join(dir, 'data');
  keelson = (await startKeelson(dataDir)).proc;
  await stopChild(keelson);
  keelson = undefined;
  const tls = clientTLSFromKubeconfig(join(dataDir, 'kubeconfig'));
  await startEcho(nodeHttp, 'bare.js', join(dataDir, 'pki'), tls);
  await startEcho(lean, 'lean-echo.js', join(dataDir, 'pki'), tls);
  // one unmeasured round each (JIT), then alternating measured rounds
  for (let i = -1; i < ROUNDS; i++) {
    process.stderr.write(`[echoes] round ${i + 1}/${ROUNDS}\n`);
    for (const e of i % 2 ? [lean, nodeHttp] : [nodeHttp, lean]) await measure(e);
    if (i === -1) for (const e of [nodeHttp, lean]) e.rounds.length = 0;
  }
  const summary = (e: Echo) => ({ server: e.name, medianPerSec: median(e.rounds.map((r) => r.perSec)), medianCpuUsPerRequest: median(e.rounds.map((r) => r.cpuUsPerRequest)), rounds: e.rounds });
  const a = summary(nodeHttp);
  const b = summary(lean);
  console.log(JSON.stringify({ nodeHttp: a, lean: b, nodeHttpCostUsPerRequest: a.medianCpuUsPerRequest - b.medianCpuUsPerRequest }, null, 2));
} finally {
  await Promise.all([stopChild(keelson), stopChild(nodeHttp.proc), stopChild(lean.proc)]);
  rmSync(dir, { recursive: true, force: true });
}
