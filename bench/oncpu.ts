// Where a durable create's CPU goes, kernel and native code included: the creates load of
// `npm run bench` (64 clients, 1 KB ConfigMaps, bench/loadgen.ts) against a fresh Keelson, sampled
// on the CPU by `perf record -e cpu-clock` (a software clock: it works in virtual machines that
// give perf no hardware counters), then split by thread (the main thread, the storage worker, the
// other threads: V8's GC and compiler helpers, libuv's pool) and by kind of code (the kernel,
// compiled JavaScript, V8's builtins, V8's runtime, garbage collection, malloc and memcpy, OpenSSL,
// Node's C++ and libuv, SQLite), in microseconds per create. `--bare` profiles the bare POST echo
// (bench/bare.ts) under the same load the same way, for the side-by-side view.
//
//   node dist/bench/oncpu.js [--seconds 5] [--warmup 6000] [--top 12] [--bare] [--keep DIR]
//                            [--callers REGEX [--depth 3]]
//
// `--callers` records call chains too (perf's frame-pointer unwinding, which walks V8's compiled
// frames) and adds, for the samples of the main thread whose own symbol matches REGEX, the
// chains of their nearest callers (`--depth` frames), in microseconds per create.
//
// The V8 CPU profiles of `--cpu-prof` sample wall time: a thread preempted inside a call (a write
// that wakes the load generator, a postMessage that wakes the worker) is counted there, and
// nothing is seen of the kernel's or OpenSSL's share. These samples are taken only while a thread
// is on a CPU. Compiled JavaScript is named from node's `--perf-basic-prof` map. Needs `perf`
// (Debian's linux-perf); prints one JSON document.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchConfigMap, cliOption, freePort, onLines, round, startKeelson, stopChild, untilLine, type Target } from './common.js';
import type { LoadConfig, LoadResult } from './loadgen.js';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = cliOption;
const SECONDS = Number(opt('seconds') ?? 5);
const WARMUP_MS = Number(opt('warmup') ?? 6000);
const TOP = Number(opt('top') ?? 12);
const BARE = args.includes('--bare');
const KEEP = opt('keep');
const CALLERS = opt('callers');
const DEPTH = Number(opt('depth') ?? 3);
/** samples per second of CPU time */
const HZ = 1999;

/** the kind of code a sampled symbol belongs to */
export function category(dso: string, sym: string, kernel: boolean): string {
  if (kernel) return 'kernel';
  if (dso.startsWith('[JIT]') || sym.startsWith('JS:')) return 'javascript';
  if (dso.includes('better_sqlite3') || /^sqlite3|^(Statement|Database)::/.test(sym)) return 'sqlite';
  if (/Scaveng|Marking|Sweep|MarkCompact|Evacuat|RememberedSet|ArrayBufferSweeper|Worklist|^v8::internal::Heap::|SemiSpace|NewSpace|PagedSpace|MemoryAllocator/.test(sym)) return 'gc';
  if (sym.startsWith('Builtins_')) return 'v8 builtins';
  if (/malloc|^cfree|^free$|_int_free|memmove|memset|memcpy|memcmp|unlink_chunk|consolidate|realloc|operator new|operator delete/.test(sym)) return 'malloc and memcpy';
  if (/aes|gcm|ghash|EVP_|SSL|ssl3|tls1|ossl_|OPENSSL|CRYPTO_|BIO_|sha\d|^node::crypto::/.test(sym)) return 'openssl';
  if (/^node::|^uv_|^uv__|llhttp|^std::/.test(sym)) return 'node c++ and libuv';
  if (/^v8::|^Runtime_/.test(sym)) return 'v8 runtime';
  return `other (${dso})`;
}

interface Sample {
  tid: number;
  /** samples of this thread and symbol */
  n: number;
  dso: string;
  sym: string;
  kernel: boolean;
}

/** the rows of `perf report -n --sort pid,dso,sym`: percent, samples, tid:comm, dso, [k] or [.], symbol */
function parseReport(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*[\d.]+%\s+(\d+)\s+(\d+):\S+\s+(\[JIT\] tid \d+|\S+)\s+\[([k.])\]\s+(.*)$/.exec(line);
    if (!m) continue;
    out.push({ n: Number(m[1]), tid: Number(m[2]), dso: m[3]!, kernel: m[4] === 'k', sym: m[5]!.trim() });
  }
  return out;
}

/** the creates load for WARMUP_MS + SECONDS; perf samples the server in the measured window */
function loadAndSample(target: Target, pid: number, perfData: string): Promise<{ load: LoadResult; perfExit: number | null }> {
  const cfg: LoadConfig = { ...target, method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: benchConfigMap('bench-__N__'), expectStatus: 201, concurrency: 64, warmupMs: WARMUP_MS, durationMs: SECONDS * 1000, maxRequests: 5_000_000 };
  return new Promise((res, rej) => {
    const lg = spawn(process.execPath, [join(here, 'loadgen.js'), JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let perf: ChildProcess | undefined;
    let perfDone: Promise<number | null> = Promise.resolve(null);
    let load: LoadResult | undefined;
    onLines(lg.stdout!, (line) => {
      if (line === 'warm') {
        // (the load generator's window and perf's start within a few ms of each other; both last SECONDS)
        perf = spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', String(HZ), ...(CALLERS ? ['-g'] : []), '-p', String(pid), '-o', perfData, '--', 'sleep', String(SECONDS)], { stdio: 'ignore' });
        perfDone = new Promise((r) => perf!.once('exit', (code) => r(code)));
      } else if (line.startsWith('{')) load = JSON.parse(line) as LoadResult;
    });
    lg.once('exit', async (code) => {
      const perfExit = await perfDone;
      if (code !== 0 || !load) rej(new Error(`loadgen exited with ${code}`));
      else res({ load, perfExit });
    });
  });
}

function summarize(samples: Sample[], mainTid: number, hz: number, seconds: number, requests: number) {
  let totalSamples = 0;
  for (const s of samples) totalSamples += s.n;
  // the storage worker: the thread with the most SQLite samples
  const sqliteByTid = new Map<number, number>();
  for (const s of samples) if (category(s.dso, s.sym, s.kernel) === 'sqlite') sqliteByTid.set(s.tid, (sqliteByTid.get(s.tid) ?? 0) + s.n);
  const workerTid = [...sqliteByTid].sort((a, b) => b[1] - a[1])[0]?.[0];
  const role = (tid: number) => (tid === mainTid ? 'main' : tid === workerTid ? 'storage worker' : 'other threads');
  // one sample is 1/hz s of CPU
  const usPerSample = 1e6 / hz / requests;
  const byRole: Record<string, { usPerRequest: number; byCategory: Record<string, number>; top: Record<string, [number, string][]> }> = {};
  for (const s of samples) {
    const r = (byRole[role(s.tid)] ??= { usPerRequest: 0, byCategory: {}, top: {} });
    const c = category(s.dso, s.sym, s.kernel);
    const us = s.n * usPerSample;
    r.usPerRequest += us;
    r.byCategory[c] = (r.byCategory[c] ?? 0) + us;
    (r.top[c] ??= []).push([us, s.sym]);
  }
  const out: Record<string, unknown> = {};
  for (const [name, r] of Object.entries(byRole).sort((a, b) => b[1].usPerRequest - a[1].usPerRequest)) {
    const cats = Object.entries(r.byCategory).sort((a, b) => b[1] - a[1]);
    out[name] = {
      usPerRequest: round(r.usPerRequest, 1),
      byCategory: Object.fromEntries(cats.map(([c, us]) => [c, round(us, 1)])),
      top: Object.fromEntries(
        cats.map(([c]) => [
          c,
          r.top[c]!
            .sort((a, b) => b[0] - a[0])
            .slice(0, TOP)
            .map(([us, sym]) => `${round(us, 2)} ${sym.replace(/file:\/\/\S*\/dist\//, '').slice(0, 120)}`),
        ]),
      ),
    };
  }
  return { cpuUsPerRequest: round(Object.values(byRole).reduce((a, r) => a + r.usPerRequest, 0), 1), sampledCores: round(totalSamples / hz / seconds, 2), byThread: out };
}

async function profile(label: string, target: Target, proc: ChildProcess, dir: string) {
  const pid = proc.pid!;
  const perfData = join(dir, `${label}.perf.data`);
  process.stderr.write(`[oncpu] ${label}: ${WARMUP_MS} ms of warm-up, then ${SECONDS} s sampled\n`);
  const { load, perfExit } = await loadAndSample(target, pid, perfData);
  if (perfExit !== 0 || !existsSync(perfData)) throw new Error(`perf record failed (exit ${perfExit}); is perf installed and allowed (kernel.perf_event_paranoid)?`);
  const rep = spawnSync('perf', ['report', '-i', perfData, '--stdio', '-n', '--no-children', '-g', 'none', '--sort', 'pid,dso,sym'], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const samples = parseReport(rep.stdout);
  const requests = load.perSec * SECONDS;
  const callers = CALLERS ? callersOf(perfData, pid, new RegExp(CALLERS), 1e6 / HZ / requests) : undefined;
  return { rate: load.perSec, p99Ms: round(load.latencyMs.p99, 1), clientCores: load.clientCores, ...summarize(samples, pid, HZ, SECONDS, requests), ...(callers ? { callers } : {}) };
}

/** the main thread's samples whose own symbol matches `re`, counted by the chain of their DEPTH nearest callers */
function callersOf(perfData: string, mainTid: number, re: RegExp, usPerSample: number): string[] {
  const script = spawnSync('perf', ['script', '-i', perfData, '--tid', String(mainTid), '-F', 'tid,ip,sym'], { encoding: 'utf8', maxBuffer: 1024 * 1024 * 1024 });
  const counts = new Map<string, number>();
  // one sample: a header line, then one line per frame (address, symbol), then an empty line
  for (const block of script.stdout.split(/\n\s*\n/)) {
    const frames = block
      .split('\n')
      .slice(1)
      .map((l) => /^\s*[0-9a-f]+\s+(.*)$/.exec(l)?.[1]?.trim())
      .filter((f): f is string => !!f);
    if (frames.length === 0 || !re.test(frames[0]!)) continue;
    const chain = frames
      .slice(1, 1 + DEPTH)
      .map((f) => f.replace(/file:\/\/\S*\/dist\//, '').replace(/ bundle\/\S+/, '').slice(0, 60))
      .join(' < ');
    counts.set(chain, (counts.get(chain) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP)
    .map(([chain, n]) => `${round(n * usPerSample, 2)} ${chain}`);
}

const dir = KEEP ?? mkdtempSync(join(tmpdir(), 'keelson-oncpu-'));
const procs: ChildProcess[] = [];
const maps: string[] = [];
try {
  // (run in the temporary directory: --perf-basic-prof makes V8 write its code log in the working directory)
  const k = await startKeelson(join(dir, 'data'), { nodeArgs: ['--perf-basic-prof'], cwd: dir });
  procs.push(k.proc);
  maps.push(`/tmp/perf-${k.proc.pid}.map`);
  const result: Record<string, unknown> = { keelson: await profile('keelson', k.target, k.proc, dir) };
  if (BARE) {
    const port = await freePort();
    const pki = join(dir, 'data', 'pki');
    const bare = spawn(process.execPath, ['--perf-basic-prof', join(here, 'bare.js'), String(port), join(pki, 'apiserver.crt'), join(pki, 'apiserver.key'), join(pki, 'ca.crt')], { stdio: ['ignore', 'pipe', 'ignore'], cwd: dir });
    procs.push(bare);
    maps.push(`/tmp/perf-${bare.pid}.map`);
    await untilLine(bare, 'listening', 10_000, 'the bare server');
    result.bare = await profile('bare', { ...k.target, port }, bare, dir);
  }
  console.log(JSON.stringify(result, null, 2));
} finally {
  await Promise.all(procs.map((p) => stopChild(p)));
  for (const m of maps) rmSync(m, { force: true });
  if (!KEEP) rmSync(dir, { recursive: true, force: true });
}
