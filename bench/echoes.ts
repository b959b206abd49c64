// What node:http's JavaScript costs a request: the bare server's POST echo (bench/bare.ts, on
// node:https) beside the same echo without node:http's request and response objects
// (bench/lean-echo.ts: the same TLS setup and native parser, the answer written as one head and
// one body), under the creates load of `npm run bench` (64 clients, 1 KB ConfigMap bodies,
// bench/loadgen.ts), in alternating rounds. Each round reads the server's CPU time around the
// measured window. Prints one JSON document: per round rate and server CPU per request, and the
// medians. A Keelson is started first only for its certificates (the bare server's are Keelson's).
// A third echo, bench/offload-echo.ts, does its TLS and socket calls on a worker thread; each
// round also reads the main thread's CPU apart from the other threads' (/proc/<pid>/task), which
// sizes what moving that work off Keelson's main thread would save it and cost the machine.
//
//   node dist/bench/echoes.js [--rounds 6] [--duration 3000]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchConfigMap, clientTLSFromKubeconfig, cliOption, freePort, loadWithServerCPU, median, round, startKeelson, stopChild, threadCPUSeconds, untilLine, type Target } from './common.js';
import type { LoadConfig } from './loadgen.js';

const here = dirname(fileURLToPath(import.meta.url));
const opt = cliOption;
const ROUNDS = Number(opt('rounds') ?? 6);
const DURATION_MS = Number(opt('duration') ?? 3000);

interface Echo {
  name: string;
  proc?: ChildProcess;
  target?: Target;
  rounds: { perSec: number; cpuUsPerRequest: number; mainUsPerRequest: number; othersUsPerRequest: number; p99Ms: number }[];
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
  const before = threadCPUSeconds(e.proc!.pid!);
  const { load, cpuUsPerRequest } = await loadWithServerCPU(cfg, e.proc!.pid!, true);
  const after = threadCPUSeconds(e.proc!.pid!);
  // per thread over the whole run, warm-up included (the window's split is the same)
  const main = after.mainUser + after.mainSys - before.mainUser - before.mainSys;
  const others = after.others - before.others;
  const share = (s: number) => Math.round((cpuUsPerRequest * s) / (main + others || 1));
  e.rounds.push({ perSec: load.perSec, cpuUsPerRequest, mainUsPerRequest: share(main), othersUsPerRequest: share(others), p99Ms: round(load.latencyMs.p99, 1) });
}

const dir = mkdtempSync(join(tmpdir(), 'keelson-echoes-'));
const nodeHttp: Echo = { name: 'node:https (bench/bare.ts)', rounds: [] };
const lean: Echo = { name: 'native parser only (bench/lean-echo.ts)', rounds: [] };
const offload: Echo = { name: 'TLS and sockets on a worker thread (bench/offload-echo.ts)', rounds: [] };
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
  await startEcho(offload, 'offload-echo.js', join(dataDir, 'pki'), tls);
  const echoes = [nodeHttp, lean, offload];
  // one unmeasured round each (JIT), then alternating measured rounds
  for (let i = -1; i < ROUNDS; i++) {
    process.stderr.write(`[echoes] round ${i + 1}/${ROUNDS}\n`);
    for (const e of i % 2 ? [...echoes].reverse() : echoes) await measure(e);
    if (i === -1) for (const e of echoes) e.rounds.length = 0;
  }
  const summary = (e: Echo) => ({
    server: e.name,
    medianPerSec: median(e.rounds.map((r) => r.perSec)),
    medianCpuUsPerRequest: median(e.rounds.map((r) => r.cpuUsPerRequest)),
    medianMainUsPerRequest: median(e.rounds.map((r) => r.mainUsPerRequest)),
    medianOthersUsPerRequest: median(e.rounds.map((r) => r.othersUsPerRequest)),
    rounds: e.rounds,
  });
  const a = summary(nodeHttp);
  const b = summary(lean);
  const c = summary(offload);
  console.log(
    JSON.stringify(
      {
        nodeHttp: a,
        lean: b,
        offload: c,
        nodeHttpCostUsPerRequest: a.medianCpuUsPerRequest - b.medianCpuUsPerRequest,
        // what the worker thread takes off the main thread, and what the crossing adds in all
        offloadMainSavedUsPerRequest: b.medianMainUsPerRequest - c.medianMainUsPerRequest,
        offloadExtraCpuUsPerRequest: c.medianCpuUsPerRequest - b.medianCpuUsPerRequest,
      },
      null,
      2,
    ),
  );
} finally {
  await Promise.all([stopChild(keelson), stopChild(nodeHttp.proc), stopChild(lean.proc), stopChild(offload.proc)]);
  rmSync(dir, { recursive: true, force: true });
}
