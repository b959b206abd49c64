// Instructions per durable create (or per get), counted by valgrind's callgrind: a measure of the
// server's work that does not move with the machine's other load. Rates and CPU times on this kind
// of machine move 10-40% between rounds (bench/duel.ts needs 16 rounds or more to see a 5% change).
// The count does not move with the machine, but it does move with V8: a window of 2,000 creates
// that holds a major GC (concurrent marking and sweeping of the whole heap, which the watch cache
// keeps growing) or a burst of compiling counts 20% to 130% more than one that does not (windows
// of one process, one after the other: 585K, 414K, 497K, 440K; another: 385K, 372K, 407K, 890K).
// So each server is counted in `--windows` windows (default 5) one after the other, and the
// median window is its figure (`instructionsPerCreate`: the request path's own work, the figure
// to compare builds by); the mean (`meanPerCreate`) spreads the GC and compiling over all creates.
// `windowsV8PerCreate` gives each window's instructions in V8's heap and compiler code. Compare
// two builds in both orders (`--dir A --dir B`, then `--dir B --dir A`): one position of a run has
// often counted more, the first in some sessions and the second in others (2026-12-04: major GCs in
// most of the second server's windows, both times), for reasons not found; compare the windows'
// counts without V8's GC and compiler too.
//
//   node dist/bench/instructions.js [--dir DIR ...] [--warm 10000] [--creates 2000] [--windows 5]
//                                   [--top 40] [--keep DIR] [--load gets] [--bare] [--args "..." ...]
//
// For each build DIR (default: this checkout; give --dir twice to compare two builds), it starts
// `keelson server` under `valgrind --tool=callgrind` (fresh data directory, sqlite backend, a free
// port on 127.0.0.1) with counting off, sends `--warm` creates (1 KB ConfigMaps, as `npm run
// bench`, 64 clients on kept-alive connections) so that V8 has compiled the hot path, turns
// counting on (`callgrind_control -i on`), sends `--creates` more, turns it off and reads the
// total, once per window. Every thread of the server process is counted (the main thread, the storage worker,
// V8's GC helpers); the kernel's work (syscalls, fsync) is not. `--top N` lists the functions with
// the most instructions of their own per create in the median window, V8's compiled JavaScript
// named from node's --perf-basic-prof map (which makes V8 report every object a GC moves:
// `Heap::OnMoveEvent`, a few thousand instructions per create that a run without --top does not
// have). `--keep DIR` copies the median window's dump and the perf map into DIR, for
// `callgrind_annotate --tree=caller`. Under valgrind the server runs about 50 times slower: a run
// takes two to four minutes per build. `--load gets` counts GETs of one ConfigMap instead (the gets load of `npm run
// bench`; --warm and --creates then count GETs). `--bare` counts the bare server of `npm run bench`
// (bench/bare.ts, with the first Keelson's certificates) under the same load too: its POST echo
// of the same bodies, or its GET of a body as long as Keelson's answer. Prints one JSON document;
// progress goes to stderr.
//
// What the count leaves out: time that is not instructions (cache misses, waiting for a CPU),
// which is why rates are still measured by run.ts and duel.ts. Batches of the group commit are
// larger under valgrind (the server is slower than its clients), so storage's share is smaller
// than at full speed.
import type { Agent } from 'node:https';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentFor, benchConfigMap, clientTLSFromKubeconfig, freePort, onLines, probe, request, round, sleep, stopChild, type Target } from './common.js';

const args = process.argv.slice(2);
function opt(name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}
function opts(name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) if (args[i] === `--${name}` && args[i + 1] !== undefined) out.push(args[i + 1]!);
  return out;
}
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write('usage: node dist/bench/instructions.js [--dir DIR ...] [--warm 10000] [--creates 2000] [--top 40] [--windows 5] [--keep DIR] [--concurrency 64] [--load creates|gets] [--bare] [--args "server args" ...]\n');
  process.exit(0);
}

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DIRS = opts('dir').length ? opts('dir').map((d) => resolve(d)) : [here];
/** more arguments of `keelson server` for each --dir, by position (`--args ""` for none) */
const ARGS = opts('args').map((a) => a.split(' ').filter(Boolean));
const WARM = Number(opt('warm') ?? 10_000);
const CREATES = Number(opt('creates') ?? 2_000);
const TOP = Number(opt('top') ?? 0);
const CONCURRENCY = Number(opt('concurrency') ?? 64);
const LOAD = opt('load') ?? 'creates';
const BARE = args.includes('--bare');
/** counted windows per server, one after the other in the same process (each `--creates` long) */
const WINDOWS = Math.max(1, Math.min(9, Number(opt('windows') ?? 5)));
/** a directory to keep each server's median-window dump and its perf map in (for callgrind_annotate --tree=caller) */
const KEEP = opt('keep');
if (LOAD !== 'creates' && LOAD !== 'gets') {
  process.stderr.write(`instructions: --load is creates or gets, not ${JSON.stringify(LOAD)}\n`);
  process.exit(2);
}
const log = (s: string) => process.stderr.write(`[instructions] ${s}\n`);

function have(cmd: string): boolean {
  try {
    execFileSync(cmd, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
if (!have('valgrind') || !have('callgrind_control')) {
  process.stderr.write('instructions: valgrind (with callgrind_control) is not installed; on Debian: apt-get install -y valgrind\n');
  process.exit(2);
}
for (const d of DIRS) {
  if (!existsSync(join(d, 'bin', 'keelson')) || !existsSync(join(d, 'dist'))) {
    process.stderr.write(`instructions: ${d} is not a built checkout (bin/keelson and dist/ are needed)\n`);
    process.exit(2);
  }
}

const GET_NAME = 'bench-get';

/**
 * sends n requests of the load (creates, or GETs of GET_NAME) with `CONCURRENCY` clients over the
 * agent's kept-alive connections (new connections would count their TLS handshakes); returns the
 * failures
 */
async function send(target: Target, agent: Agent, prefix: string, n: number): Promise<number> {
  const template = benchConfigMap(`${prefix}-__N__`);
  const get = LOAD === 'gets';
  let next = 0;
  let failed = 0;
  const one = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      try {
        const r = get
          ? await request(target, agent, 'GET', `/api/v1/namespaces/default/configmaps/${GET_NAME}`)
          : await request(target, agent, 'POST', '/api/v1/namespaces/default/configmaps', template.replace('__N__', String(i)));
        if (r.status !== (get ? 200 : 201)) failed++;
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, one));
  return failed;
}

interface FunctionCost {
  instructionsPerCreate: number;
  function: string;
}

/** each function's own instructions in a dump, as callgrind_annotate lists them (annotated once per dump: --top reads the median window's again) */
const annotated = new Map<string, { ir: number; name: string }[]>();
function selfCosts(dump: string): { ir: number; name: string }[] {
  const known = annotated.get(dump);
  if (known) return known;
  const out = execFileSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', dump], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const costs: { ir: number; name: string }[] = [];
  for (const line of out.split('\n')) {
    const m = /^\s*([\d,]+)\s+\([\s\d.]+%\)\s+(.*)$/.exec(line);
    if (m && !m[2]!.includes('PROGRAM TOTALS')) costs.push({ ir: Number(m[1]!.replace(/,/g, '')), name: m[2]! });
  }
  annotated.set(dump, costs);
  return costs;
}

/** the functions with the most instructions of their own, JIT code named from the perf map */
function topFunctions(dump: string, mapFile: string, n: number): FunctionCost[] {
  const map: { start: number; end: number; name: string }[] = [];
  if (existsSync(mapFile)) {
    for (const line of readFileSync(mapFile, 'utf8').split('\n')) {
      const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
      if (m) map.push({ start: parseInt(m[1]!, 16), end: parseInt(m[1]!, 16) + parseInt(m[2]!, 16), name: m[3]! });
    }
  }
  // the last entry holding an address is the code that lives there now (code moves and is reused)
  const nameOf = (addr: number): string | undefined => {
    for (let i = map.length - 1; i >= 0; i--) if (map[i]!.start <= addr && addr < map[i]!.end) return map[i]!.name;
    return undefined;
  };
  const sums = new Map<string, number>();
  for (const { ir, name } of selfCosts(dump)) {
    let fn = name.replace(/'\d+/g, '');
    const addr = /\?\?\?:0x([0-9a-f]+)/.exec(fn);
    if (addr) fn = nameOf(parseInt(addr[1]!, 16)) ?? fn;
    fn = fn.replace(/file:\/\/\S*\/dist\//g, '').replace(/ \[\/\S+\]$/, '');
    sums.set(fn, (sums.get(fn) ?? 0) + ir);
  }
  return [...sums]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([fn, ir]) => ({ instructionsPerCreate: Math.round(ir / CREATES), function: fn }));
}

/** copies a dump and the perf map beside it into KEEP; returns where they are */
function keep(dump: string, mapFile: string, label: string): { dump: string; perfMap?: string } {
  mkdirSync(KEEP!, { recursive: true });
  const base = join(KEEP!, label.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^_+/, ''));
  copyFileSync(dump, `${base}.callgrind`);
  if (!existsSync(mapFile)) return { dump: `${base}.callgrind` };
  copyFileSync(mapFile, `${base}.perf.map`);
  return { dump: `${base}.callgrind`, perfMap: `${base}.perf.map` };
}

/**
 * V8's own garbage collection and compilation in a dump, per create: the instructions of its
 * functions named as heap or compiler code (by C++ namespace and class; a guide, not an exact split)
 */
const GC_FN = /v8::internal::(Scavenger|Scavenge|MarkCompact|Marking|MarkingVisitor|ConcurrentMarking|IncrementalMarking|Sweeper|Evacuat|Heap::|PretenuringHandler|MinorMarkSweep|RememberedSet|SlotSet|MainMarkingVisitor|GCTracer)|heap::base::|cppgc::/;
const COMPILER_FN = /v8::internal::(compiler::|maglev::|baseline::|interpreter::Bytecode)|Turboshaft|turboshaft/;
function v8Share(dump: string): { gc: number; compiler: number } {
  let gc = 0;
  let compiler = 0;
  for (const { ir, name } of selfCosts(dump)) {
    if (GC_FN.test(name)) gc += ir;
    else if (COMPILER_FN.test(name)) compiler += ir;
  }
  return { gc: Math.round(gc / CREATES), compiler: Math.round(compiler / CREATES) };
}

/** the dump callgrind wrote last in `work` (the counted window's) and its total */
function countedTotal(work: string): { dump: string; total: number } {
  const dumps = readdirSync(work)
    .filter((f) => f.startsWith('callgrind.out.'))
    .map((f) => join(work, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (!dumps.length) throw new Error('callgrind wrote no dump');
  const totals = /^totals:\s*(\d+)/m.exec(readFileSync(dumps[0]!, 'utf8'));
  if (!totals) throw new Error('no totals in the callgrind dump');
  return { dump: dumps[0]!, total: Number(totals[1]) };
}

/**
 * warm up, then count `CREATES` requests of the load on the server under callgrind (pid),
 * `WINDOWS` times in a row; each window's total is read from the dump written in `work` at its end
 */
async function count(pid: number, target: Target, label: string, work: string) {
  const agent = agentFor(target, CONCURRENCY);
  try {
    const t0 = Date.now();
    log(`${label}: ${WARM} ${LOAD} to warm up`);
    const warmFailed = await send(target, agent, 'warm', WARM);
    const t1 = Date.now();
    let failed = 0;
    const windows: { total: number; dump: string; seconds: number }[] = [];
    for (let w = 0; w < WINDOWS; w++) {
      const s = Date.now();
      execFileSync('callgrind_control', ['-i', 'on', String(pid)], { stdio: 'ignore' });
      log(`${label}: ${CREATES} ${LOAD} counted${WINDOWS > 1 ? ` (window ${w + 1} of ${WINDOWS})` : ''}`);
      failed += await send(target, agent, `counted${w}`, CREATES);
      execFileSync('callgrind_control', ['-i', 'off', String(pid)], { stdio: 'ignore' });
      execFileSync('callgrind_control', ['-d', String(pid)], { stdio: 'ignore' });
      windows.push({ ...countedTotal(work), seconds: round((Date.now() - s) / 1000, 1) });
    }
    if (warmFailed || failed) throw new Error(`${warmFailed + failed} ${LOAD} failed`);
    return { warmSeconds: round((t1 - t0) / 1000, 1), windows };
  } finally {
    agent.destroy();
  }
}

/** valgrind's arguments for a node program under callgrind, counting off */
function callgrindArgs(dump: string, program: string[]): string[] {
  return ['--tool=callgrind', '--smc-check=all-non-file', '--instr-atstart=no', `--callgrind-out-file=${dump}`, process.execPath, ...(TOP ? ['--perf-basic-prof'] : []), ...program];
}

/** what the bare server needs from the first Keelson: its certificates, a kubeconfig, its answer's size */
let forBare: { dir: string; getBytes: number } | undefined;

interface Counted {
  child: ChildProcess;
  /** the end of what the process wrote to stderr */
  stderr(): string;
  port: number;
}

/**
 * Runs a node program under callgrind (counting off) on a free port; `prepare` waits for it and
 * readies the load and returns the client's TLS; the load is then counted. The process, its
 * directory and its perf map are gone when this returns.
 */
async function underCallgrind(label: string, program: (work: string, port: number) => string[], prepare: (c: Counted, work: string) => Promise<ReturnType<typeof clientTLSFromKubeconfig>>) {
  const work = mkdtempSync(join(tmpdir(), 'keelson-instr-'));
  const port = await freePort();
  log(`${label}: starting under callgrind`);
  // (in its own directory: under --perf-basic-prof V8 writes its code log in the working directory)
  const child: ChildProcess = spawn('valgrind', callgrindArgs(join(work, 'callgrind.out'), program(work, port)), { stdio: ['ignore', 'pipe', 'pipe'], cwd: work });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  const mapFile = `/tmp/perf-${child.pid!}.map`;
  try {
    const tls = await prepare({ child, stderr: () => stderr, port }, work);
    const { warmSeconds, windows } = await count(child.pid!, { host: '127.0.0.1', port, servername: 'localhost', tls }, label, work);
    const perWindow = windows.map((w) => Math.round(w.total / CREATES));
    // (the median window: one window now and then holds a good deal more GC or compiling)
    const mid = windows.map((w, i) => ({ w, n: perWindow[i]! })).sort((a, b) => a.n - b.n)[(windows.length - 1) >> 1]!;
    return {
      dir: label,
      load: LOAD,
      // (per request of the load: per get with --load gets)
      instructionsPerCreate: mid.n,
      meanPerCreate: Math.round(perWindow.reduce((a, n) => a + n, 0) / perWindow.length),
      ...(windows.length > 1 ? { windowsPerCreate: perWindow, windowsV8PerCreate: windows.map((w) => v8Share(w.dump)) } : {}),
      creates: CREATES,
      warmCreates: WARM,
      warmSeconds,
      countedSeconds: round(windows.reduce((a, w) => a + w.seconds, 0), 1),
      ...(TOP ? { top: topFunctions(mid.w.dump, mapFile, TOP) } : {}),
      ...(KEEP ? { kept: keep(mid.w.dump, mapFile, label) } : {}),
    };
  } finally {
    await stopChild(child, 30_000);
    rmSync(work, { recursive: true, force: true });
    rmSync(mapFile, { force: true });
  }
}

/** Keelson of the build in `dir` */
function measure(dir: string, more: string[]) {
  const keelson = (work: string, port: number) => [join(dir, 'bin', 'keelson'), 'server', '--data-dir', join(work, 'data'), '--secure-port', String(port), '--bind-address', '127.0.0.1', ...more];
  return underCallgrind(more.length ? `${dir} ${more.join(' ')}` : dir, keelson, async ({ child, stderr, port }, work) => {
    child.stdout!.resume(); // (not read: drained, so that it never fills)
    const dataDir = join(work, 'data');
    const deadline = Date.now() + 600_000;
    while ((await probe(port, '/readyz')) !== 200) {
      if (child.exitCode !== null) throw new Error(`keelson under valgrind exited (${child.exitCode}): ${stderr()}`);
      if (Date.now() > deadline) throw new Error('keelson under valgrind was not ready within 10 minutes');
      await sleep(500);
    }
    const tls = clientTLSFromKubeconfig(join(dataDir, 'kubeconfig'));
    const target = { host: '127.0.0.1', port, servername: 'localhost', tls };
    let getBytes = 0;
    if (LOAD === 'gets') {
      const made = await request(target, undefined, 'POST', '/api/v1/namespaces/default/configmaps', benchConfigMap(GET_NAME));
      if (made.status !== 201) throw new Error(`create ${GET_NAME}: ${made.status}`);
      getBytes = (await request(target, undefined, 'GET', `/api/v1/namespaces/default/configmaps/${GET_NAME}`)).body.length;
    }
    if (BARE && !forBare) {
      // (kept apart from this run's directory, which goes when the run ends)
      const keep = mkdtempSync(join(tmpdir(), 'keelson-instr-pki-'));
      mkdirSync(join(keep, 'pki'));
      for (const f of ['apiserver.crt', 'apiserver.key', 'ca.crt']) copyFileSync(join(dataDir, 'pki', f), join(keep, 'pki', f));
      copyFileSync(join(dataDir, 'kubeconfig'), join(keep, 'kubeconfig'));
      forBare = { dir: keep, getBytes };
    }
    return tls;
  });
}

/** the bare server (bench/bare.ts) under the same load, with the first Keelson's certificates */
function measureBare(pkiHome: string, getBytes: number) {
  const pki = join(pkiHome, 'pki');
  const bare = (_work: string, port: number) => [join(here, 'dist', 'bench', 'bare.js'), String(port), join(pki, 'apiserver.crt'), join(pki, 'apiserver.key'), join(pki, 'ca.crt')];
  return underCallgrind('bare server (bench/bare.ts)', bare, async ({ child, stderr, port }) => {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the bare server under valgrind did not listen within 5 minutes')), 300_000);
      onLines(child.stdout!, (line) => {
        if (line.startsWith('listening')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the bare server under valgrind exited (${code}): ${stderr()}`));
      });
    });
    const tls = clientTLSFromKubeconfig(join(pkiHome, 'kubeconfig'));
    // a GET answers a body as long as Keelson's answer
    if (LOAD === 'gets') await request({ host: '127.0.0.1', port, servername: 'localhost', tls }, undefined, 'POST', '/_bench/get-body', Buffer.alloc(getBytes, 0x61));
    return tls;
  });
}

const results = [];
for (const [i, d] of DIRS.entries()) results.push(await measure(d, ARGS[i] ?? []));
const out: Record<string, unknown> = { valgrind: execFileSync('valgrind', ['--version'], { encoding: 'utf8' }).trim(), node: process.version, results };
if (results.length === 2) out['secondOverFirst'] = round(results[1]!.instructionsPerCreate / results[0]!.instructionsPerCreate, 3);
if (forBare) {
  try {
    const bare = await measureBare(forBare.dir, forBare.getBytes);
    out['bare'] = bare;
    out['keelsonOverBare'] = results.map((r) => round(r.instructionsPerCreate / bare.instructionsPerCreate, 2));
  } finally {
    rmSync(forBare.dir, { recursive: true, force: true });
  }
}
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
