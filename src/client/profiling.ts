// This process's profilers, and Go's /debug/pprof endpoints over them (net/http/pprof), for every
// Keelson component that serves them: the API server (--profiling), the controller manager and
// the scheduler on their secure ports (--profiling), the node agent on its main port
// (enableProfilingHandler); and for `keelson patch --profile`.
//
// It lives in client/ because every one of those layers imports client/ (and none may import
// another of them); it does no I/O but the process's own inspector and the response it writes.
//
// The profilers are V8's, through an in-process inspector session (node:inspector): nothing runs
// until asked, but V8's sampling heap profiler, which a component starts with profiling on, as Go's
// runtime always samples the heap (one sample per 512 KiB allocated on average, Go's MemProfileRate;
// its cost did not show above the noise of an allocation-heavy loop, nor of creates and lists
// against the API server; starting it takes a few milliseconds). The profiles are written in Go's
// pprof format (codec/pprof.ts):
//   /debug/pprof/profile?seconds=N   V8's CPU profiler, sampling every millisecond, for N seconds
//                                    (default 30): [samples/count, cpu/nanoseconds]; the (idle)
//                                    samples of the event loop waiting are left out
//   /debug/pprof/heap, /allocs       V8's sampling heap profile of live objects: [inuse_space/bytes]
//                                    (both the same data, as Go's heap and allocs are; ?gc=1 runs a
//                                    full collection first, for heap)
//   /debug/pprof/block, /mutex       empty profiles with Go's sample types [contentions/count,
//                                    delay/nanoseconds]: Node has no contention profiler, and Go's
//                                    are empty too without contention profiling
//   /debug/pprof/goroutine, /threadcreate, /trace, any other name
//                                    404 "Unknown profile", Go's answer for a profile its runtime
//                                    does not have (JavaScript has no goroutines; Go's execution
//                                    trace format has no Node source)
//   /debug/pprof/symbol              "num_symbols: 1": Keelson's profiles carry their function
//                                    names, no address is ever left to look up
//   /debug/pprof/cmdline             the command line, NUL-separated (where Kubernetes registers it:
//                                    the kubelet; kube-apiserver's routes do not, and there Go's
//                                    Index answers "Unknown profile" for it)
//   /debug/pprof/                    the index page, as net/http/pprof's
// The profiles cover the main thread, where Keelson's JavaScript runs (the SQLite worker thread's
// time is not in them).
import { Session } from 'node:inspector';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  cpuProfileFromV8,
  deltaProfile,
  emptyProfile,
  encodeProfile,
  heapProfileFromV8,
  nowNanos,
  profileText,
  type ProfileData,
  type V8CpuProfile,
  type V8SamplingHeapProfile,
} from '../codec/pprof.js';

/** V8's heap sampling interval: Go's runtime.MemProfileRate, 512 KiB */
export const HEAP_SAMPLING_INTERVAL_BYTES = 512 * 1024;
/** V8's CPU sampling interval, microseconds (V8's default; Go samples at 100 Hz, but only while a profile runs here too) */
export const CPU_SAMPLING_INTERVAL_MICROS = 1000;

/** Go's error for a second CPU profile while one runs (runtime/pprof.StartCPUProfile) */
export class CPUProfilingInUse extends Error {
  constructor() {
    super('cpu profiling already in use');
    this.name = 'CPUProfilingInUse';
  }
}

/** a CPU profile being recorded; stop() ends it */
export interface CPUProfileRun {
  stop(): Promise<ProfileData>;
}

/** The process's profilers (one per process: `keelson server` serves several components from one). */
export class ProcessProfiler {
  private session: Session | undefined;
  private heapSampling: Promise<void> | undefined;
  private cpuRunning = false;

  private post<T = any>(method: string, params?: object): Promise<T> {
    if (!this.session) {
      this.session = new Session();
      this.session.connect();
    }
    const s = this.session;
    return new Promise<T>((resolve, reject) => s.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res as T))));
  }

  /** is V8's sampling heap profiler on? */
  get heapSamplingOn(): boolean {
    return this.heapSampling !== undefined;
  }

  /** Starts V8's sampling heap profiler (once; later calls wait for the first). */
  startHeapSampling(): Promise<void> {
    this.heapSampling ??= this.post('HeapProfiler.startSampling', { samplingInterval: HEAP_SAMPLING_INTERVAL_BYTES }).then(
      () => undefined,
      (e) => {
        this.heapSampling = undefined;
        throw e;
      },
    );
    return this.heapSampling;
  }

  /** A full garbage collection (Go's runtime.GC, for ?gc=1 and kubectl's heap profile). */
  async collectGarbage(): Promise<void> {
    await this.post('HeapProfiler.collectGarbage');
  }

  /**
   * The live objects V8's sampling heap profiler has seen (it is started when off: the first
   * profile then holds only what was allocated since).
   */
  async heapProfile(): Promise<ProfileData> {
    await this.startHeapSampling();
    const timeNanos = nowNanos();
    const { profile } = await this.post<{ profile: V8SamplingHeapProfile }>('HeapProfiler.getSamplingProfile');
    return heapProfileFromV8(profile, { timeNanos, samplingIntervalBytes: HEAP_SAMPLING_INTERVAL_BYTES });
  }

  /** Starts V8's CPU profiler; throws CPUProfilingInUse while another profile runs. */
  async startCPU(): Promise<CPUProfileRun> {
    if (this.cpuRunning) throw new CPUProfilingInUse();
    this.cpuRunning = true;
    const startedNanos = nowNanos();
    try {
      await this.post('Profiler.enable');
      await this.post('Profiler.setSamplingInterval', { interval: CPU_SAMPLING_INTERVAL_MICROS });
      await this.post('Profiler.start');
    } catch (e) {
      this.cpuRunning = false;
      await this.post('Profiler.disable').catch(() => undefined);
      throw e;
    }
    let stopped: Promise<ProfileData> | undefined;
    return {
      stop: () =>
        (stopped ??= (async () => {
          try {
            const { profile } = await this.post<{ profile: V8CpuProfile }>('Profiler.stop');
            return cpuProfileFromV8(profile, { startedNanos, periodNanos: CPU_SAMPLING_INTERVAL_MICROS * 1000 });
          } finally {
            // (the profiler is let go: nothing samples between profiles)
            await this.post('Profiler.disable').catch(() => undefined);
            this.cpuRunning = false;
          }
        })()),
    };
  }
}

let shared: ProcessProfiler | undefined;
/** the process's profiler */
export function processProfiler(): ProcessProfiler {
  return (shared ??= new ProcessProfiler());
}

// ── the profiles by name ────────────────────────────────────────────────────────────────────

const CONTENTION_TYPES = [
  { type: 'contentions', unit: 'count' },
  { type: 'delay', unit: 'nanoseconds' },
];

/** the named profiles this process has (Go's pprof.Lookup), with what each is */
const NAMED: Record<string, { description: string; collect(p: ProcessProfiler): Promise<ProfileData> }> = {
  allocs: {
    description: 'The same sampling of live objects as heap (V8 keeps no record of objects already collected): inuse_space only.',
    collect: (p) => p.heapProfile(),
  },
  block: {
    description: 'Always empty: Node.js has no profiler of blocking on synchronization (Go\'s is empty too without contention profiling).',
    collect: async () => emptyProfile(CONTENTION_TYPES, { timeNanos: nowNanos(), periodType: { type: 'contentions', unit: 'count' }, period: 1, comments: ['Node.js has no block profiler: this profile is always empty'] }),
  },
  heap: {
    description: 'A sampling of the memory of live objects (V8\'s sampling heap profiler, a sample per 512 KiB allocated on average): inuse_space. You can specify the gc GET parameter to run a full garbage collection before taking the sample.',
    collect: (p) => p.heapProfile(),
  },
  mutex: {
    description: 'Always empty: JavaScript has no mutexes to contend for (Go\'s is empty too without contention profiling).',
    collect: async () => emptyProfile(CONTENTION_TYPES, { timeNanos: nowNanos(), periodType: { type: 'contentions', unit: 'count' }, period: 1, comments: ['Node.js has no mutex profiler: this profile is always empty'] }),
  },
};

/** the names `keelson patch --profile` and /debug/pprof/<name> know, besides cpu/profile */
export function namedProfile(name: string): ((p: ProcessProfiler) => Promise<ProfileData>) | undefined {
  return Object.hasOwn(NAMED, name) ? NAMED[name]!.collect : undefined;
}

// ── /debug/pprof (net/http/pprof) ───────────────────────────────────────────────────────────

export interface PprofServeOptions {
  /**
   * the server's write timeout, seconds (Go's http.Server.WriteTimeout: a profile of this many
   * seconds or more is refused with 400); absent or 0: none (kube-apiserver, the controller
   * manager and the scheduler set none; the kubelet's is 4 hours)
   */
  writeTimeoutSeconds?: number;
  /** /debug/pprof/cmdline is served (the kubelet registers pprof.Cmdline; k8s.io/apiserver's routes.Profiling does not) */
  cmdline?: boolean;
  /** /debug/pprof without its slash: 'redirect' (routes.Profiling: 302 to /debug/pprof/) or 'index' (the kubelet's route serves the index) */
  bare?: 'redirect' | 'index';
  /** the process's profiler (tests give their own) */
  profiler?: ProcessProfiler;
}

const BASE = '/debug/pprof/';

/** Go's strconv.ParseInt(s, 10, 64): an optional sign and decimal digits; NaN when it does not parse */
function goParseInt(s: string | null): number {
  if (s === null || !/^[+-]?\d+$/.test(s)) return NaN;
  const n = Number(s);
  return Math.abs(n) <= 9223372036854775807 ? n : NaN;
}

/** Go's strconv.Atoi with the error dropped (0 when it does not parse) */
function atoi(s: string | null): number {
  const n = goParseInt(s);
  return Number.isFinite(n) ? n : 0;
}

/** net/http/pprof's serveError */
function serveError(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.removeHeader('Content-Disposition');
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Go-Pprof', '1');
  res.end(text + '\n');
}

function exceedsWriteTimeout(seconds: number, o: PprofServeOptions): boolean {
  return !!o.writeTimeoutSeconds && seconds >= o.writeTimeoutSeconds;
}

/** waits `seconds`, or less if the client goes away (Go's sleep on the request's context); true when it went away */
function sleep(res: ServerResponse, seconds: number): Promise<boolean> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const gone = () => {
      clearTimeout(timer);
      resolve(true);
    };
    // (a timer holds at most 2^31-1 ms, some 24 days: longer is as good as forever here)
    timer = setTimeout(() => {
      res.off('close', gone);
      resolve(false);
    }, Math.min(seconds * 1000, 2 ** 31 - 1));
    res.once('close', gone);
  });
}

function sendProfile(res: ServerResponse, filename: string, p: ProfileData): void {
  const body = encodeProfile(p);
  res.setHeader('Content-Type', 'application/octet-stream');
  res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

/** /debug/pprof/profile (net/http/pprof's Profile) */
async function serveCPU(res: ServerResponse, query: URLSearchParams, o: PprofServeOptions, profiler: ProcessProfiler): Promise<void> {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  let sec = goParseInt(query.get('seconds'));
  if (!(sec > 0)) sec = 30;
  if (exceedsWriteTimeout(sec, o)) return serveError(res, 400, "profile duration exceeds server's WriteTimeout");
  res.setHeader('Content-Type', 'application/octet-stream');
  res.setHeader('Content-Disposition', 'attachment; filename="profile"');
  let run: CPUProfileRun;
  try {
    run = await profiler.startCPU();
  } catch (e) {
    return serveError(res, 500, `Could not enable CPU profiling: ${(e as Error).message}`);
  }
  // (the 200 and its headers go out now: the client knows the profile runs; the body follows at its end)
  res.statusCode = 200;
  res.flushHeaders();
  await sleep(res, sec);
  const p = await run.stop();
  if (res.destroyed || res.writableEnded) return;
  res.end(encodeProfile(p));
}

/** /debug/pprof/symbol (net/http/pprof's Symbol): no program counters to name here */
async function serveSymbol(req: IncomingMessage, res: ServerResponse): Promise<void> {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  // (a POST's body, the addresses to look up, is read before the answer, as Go's handler reads it)
  if (req.method === 'POST') for await (const _ of req);
  else req.resume();
  res.end('num_symbols: 1\n');
}

/** /debug/pprof/cmdline (net/http/pprof's Cmdline): the program, then its arguments, NUL-separated (Go's os.Args) */
function serveCmdline(res: ServerResponse): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.end(process.argv.slice(1).join('\0'));
}

/** /debug/pprof/<name> (net/http/pprof's handler(name).ServeHTTP) */
async function serveNamed(res: ServerResponse, name: string, query: URLSearchParams, o: PprofServeOptions, profiler: ProcessProfiler): Promise<void> {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  const collect = namedProfile(name);
  if (!collect) return serveError(res, 404, 'Unknown profile');
  const secStr = query.get('seconds');
  if (secStr) {
    // a delta profile: what changed over `seconds`
    const sec = goParseInt(secStr);
    if (!(sec > 0)) return serveError(res, 400, 'invalid value for "seconds" - must be a positive integer');
    if (exceedsWriteTimeout(sec, o)) return serveError(res, 400, "profile duration exceeds server's WriteTimeout");
    if (atoi(query.get('debug')) !== 0) return serveError(res, 400, 'seconds and debug params are incompatible');
    let p0: ProfileData;
    try {
      p0 = await collect(profiler);
    } catch {
      return serveError(res, 500, 'failed to collect profile');
    }
    if (await sleep(res, sec)) return serveError(res, 500, 'context canceled');
    let p1: ProfileData;
    try {
      p1 = await collect(profiler);
    } catch {
      return serveError(res, 500, 'failed to collect profile');
    }
    return sendProfile(res, `${name}-delta`, deltaProfile(p0, p1));
  }
  if (name === 'heap' && atoi(query.get('gc')) > 0) await profiler.collectGarbage();
  const p = await collect(profiler);
  const debug = atoi(query.get('debug'));
  if (debug !== 0) {
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(profileText(name, p));
    return;
  }
  sendProfile(res, name, p);
}

function htmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' })[c]!);
}

const OTHER_DESCRIPTIONS: Record<string, string> = {
  cmdline: 'The command line of this process (the program, then its arguments, NUL-separated).',
  profile: 'CPU profile (V8\'s CPU profiler, a sample per millisecond, the event loop\'s idle time left out). You can specify the duration in the seconds GET parameter (default 30). Read the file with go tool pprof.',
};

/** /debug/pprof/ (net/http/pprof's Index page): the profiles, their counts and what each is */
async function serveIndex(res: ServerResponse, o: PprofServeOptions, profiler: ProcessProfiler): Promise<void> {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  // (the heap's count is its number of samples, as Go counts its heap profile's records)
  let heapCount = 0;
  if (profiler.heapSamplingOn) heapCount = (await profiler.heapProfile().catch(() => undefined))?.samples.length ?? 0;
  const entries = [
    ...Object.entries(NAMED).map(([name, d]) => ({ name, count: name === 'heap' || name === 'allocs' ? heapCount : 0, description: d.description })),
    // (Go's index lists cmdline and trace whatever the routes: this one lists what is served)
    ...Object.entries(OTHER_DESCRIPTIONS)
      .filter(([name]) => name !== 'cmdline' || o.cmdline)
      .map(([name, description]) => ({ name, count: 0, description })),
  ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const rows = entries.map((e) => `<tr><td>${e.count}</td><td><a href='${encodeURI(e.name)}?debug=1'>${htmlEscape(e.name)}</a></td></tr>\n`).join('');
  const descriptions = entries.map((e) => `<li><div class=profile-name>${htmlEscape(e.name)}: </div> ${htmlEscape(e.description)}</li>\n`).join('');
  res.end(
    `<html>
<head>
<title>/debug/pprof/</title>
<style>
.profile-name{
\tdisplay:inline-block;
\twidth:6rem;
}
</style>
</head>
<body>
/debug/pprof/
<br>
<p>Set debug=1 as a query parameter to export in text format</p>
<br>
Types of profiles available:
<table>
<thead><td>Count</td><td>Profile</td></thead>
${rows}</table>
<br>
<p>
Profile Descriptions:
<ul>
${descriptions}</ul>
</p>
</body>
</html>`,
  );
}

/**
 * Serves /debug/pprof and what is under it (authentication and authorization are the caller's,
 * done before). False for any other path.
 */
export async function serveDebugPprof(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, o: PprofServeOptions = {}): Promise<boolean> {
  const profiler = o.profiler ?? processProfiler();
  if (path === '/debug/pprof') {
    if (o.bare === 'index') {
      req.resume();
      await serveIndex(res, o, profiler);
      return true;
    }
    if (o.bare !== 'redirect') return false;
    // (Go's http.Redirect, 302 Found)
    req.resume();
    res.statusCode = 302;
    res.setHeader('Location', BASE);
    if (req.method === 'GET' || req.method === 'HEAD') res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(req.method === 'GET' ? `<a href="${BASE}">Found</a>.\n\n` : undefined);
    return true;
  }
  if (!path.startsWith(BASE)) return false;
  const name = path.slice(BASE.length);
  if (name === 'symbol') {
    await serveSymbol(req, res);
    return true;
  }
  req.resume();
  if (name === 'profile') await serveCPU(res, query, o, profiler);
  else if (name === 'cmdline' && o.cmdline) serveCmdline(res);
  else if (name === '') await serveIndex(res, o, profiler);
  else await serveNamed(res, name, query, o, profiler);
  return true;
}

// ── /debug/flags ─────────────────────────────────────────────────────────────────────────────

/** Go's index of /debug/flags/ (routes.DebugFlags), with the one flag every component registers. */
const DEBUG_FLAGS_INDEX = `<html>
<head>
<title>/debug/flags/</title>
</head>
<body>
/debug/flags/<br>
<br>
flags:<br>
<table>

<tr>v<br>

</table>
<br>
full flags configurable<br>
</body>
</html>
`;

function plainText(res: ServerResponse, code: number, msg: string): void {
  res.statusCode = code;
  res.setHeader('Content-Type', 'text/plain');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(`${msg}\n`);
}

/**
 * PUT /debug/flags/v: the body is klog's new verbosity (StringFlagPutHandler with klog's setter,
 * in its plain-text words; any other method 406). With `index`, /debug/flags and anything else
 * under /debug/flags/ answer Go's HTML index, as kube-apiserver, kube-scheduler and
 * kube-controller-manager install it with --profiling (the kubelet serves /debug/flags/v alone).
 * Authentication and authorization are the caller's. False for any other path.
 */
export async function serveDebugFlags(req: IncomingMessage, res: ServerResponse, path: string, set: (v: number) => void, o: { index?: boolean } = {}): Promise<boolean> {
  if (path !== '/debug/flags/v') {
    if (!o.index || (path !== '/debug/flags' && !path.startsWith('/debug/flags/'))) return false;
    req.resume();
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(DEBUG_FLAGS_INDEX);
    return true;
  }
  if (req.method !== 'PUT') {
    req.resume();
    plainText(res, 406, 'unsupported http method');
    return true;
  }
  let val: string;
  try {
    val = await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > 1024) reject(new Error('too large'));
        else chunks.push(c);
      });
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', reject);
    });
  } catch (e) {
    plainText(res, 400, `error reading request body: ${(e as Error).message}`);
    return true;
  }
  // (klog.Level's Set: strconv.ParseInt(val, 10, 32))
  const n = /^[+-]?\d+$/.test(val) ? Number(val) : NaN;
  if (!Number.isInteger(n)) plainText(res, 400, `failed set klog.logging.verbosity ${val}: strconv.ParseInt: parsing ${JSON.stringify(val)}: invalid syntax`);
  else if (n > 2 ** 31 - 1 || n < -(2 ** 31)) plainText(res, 400, `failed set klog.logging.verbosity ${val}: strconv.ParseInt: parsing ${JSON.stringify(val)}: value out of range`);
  else {
    set(n);
    plainText(res, 200, `successfully set klog.logging.verbosity to ${val}`);
  }
  return true;
}
