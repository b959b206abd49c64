// Watch fan-out: a process of its own that opens `streams` watch streams on each of one or more
// servers (one TLS connection each), then, round after round, sends one write that every stream of
// a server should see and measures, for each stream, the time from sending the write to the
// arrival of the complete event line carrying that round's marker. Rounds alternate between the
// servers, so that they share the same conditions (the same client process, the same moments of
// the machine's other load). Prints one JSON line: { <name>: WatchResult, ... }. It drives Keelson
// (a PUT of the watched object) and the bare server (a POST to /_bench/broadcast) the same way.
//
//   node dist/bench/watchers.js '<json WatchConfig>'
import https from 'node:https';
import type { ClientRequest } from 'node:http';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import type { ClientTLS } from './common.js';
import { latencySummary, median, round, sleep, type Latency } from './common.js';

export interface WatchTarget {
  name: string;
  host: string;
  port: number;
  servername: string;
  tls: ClientTLS;
  /** the watch request's path and query */
  watchPath: string;
  /** the write that every watcher should see; "__N__" in its body is replaced by the round's marker */
  trigger: { method: 'PUT' | 'POST'; path: string; body: string; expectStatus: number };
}

export interface WatchConfig {
  targets: WatchTarget[];
  streams: number;
  warmupRounds: number;
  /** measured rounds per target (at most 50) */
  rounds: number;
  /** a round ends when every stream has the event, or after this long */
  roundTimeoutMs: number;
  pauseMs: number;
}

export interface WatchResult {
  streams: number;
  rounds: number;
  /** ms from sending the write to each stream's arrival, all measured rounds pooled */
  deliveryMs: Latency;
  /** p50 and p99 of each round (ms) */
  roundP50Ms: number[];
  roundP99Ms: number[];
  /** ms from sending the write to the last stream's arrival, median over rounds */
  lastArrivalMedianMs: number;
  /** median ms to the write's own answer */
  writeAnswerMedianMs: number;
  /** events not received within roundTimeoutMs */
  missed: number;
  /** ms to open all the streams */
  openMs: number;
}

interface Stream {
  pending: string;
  arrived: number;
}

class Side {
  readonly streams: Stream[] = [];
  readonly requests: ClientRequest[] = [];
  readonly watchAgent: https.Agent;
  readonly writeAgent: https.Agent;
  marker = '';
  roundStart = 0;
  arrivedCount = 0;
  onAllArrived: (() => void) | undefined;
  openMs = 0;
  readonly all: number[] = [];
  readonly p50s: number[] = [];
  readonly p99s: number[] = [];
  readonly lasts: number[] = [];
  readonly answers: number[] = [];
  missed = 0;
  private readonly tls;

  constructor(readonly t: WatchTarget) {
    this.tls = { ca: t.tls.ca, cert: t.tls.cert, key: t.tls.key, servername: t.servername };
    this.watchAgent = new https.Agent({ keepAlive: false, maxSockets: Infinity, ...this.tls });
    this.writeAgent = new https.Agent({ keepAlive: true, maxSockets: 1, ...this.tls });
  }

  private openOne(): Promise<void> {
    const t = this.t;
    return new Promise((resolve, reject) => {
      const s: Stream = { pending: '', arrived: -1 };
      const req = https.request({ host: t.host, port: t.port, method: 'GET', path: t.watchPath, headers: { accept: 'application/json' }, agent: this.watchAgent, ...this.tls }, (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`${t.name}: watch answered ${res.statusCode}`));
          res.resume();
          return;
        }
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = performance.now();
          let text = s.pending + chunk;
          let nl: number;
          while ((nl = text.indexOf('\n')) >= 0) {
            const line = text.slice(0, nl);
            text = text.slice(nl + 1);
            if (this.marker && s.arrived < 0 && line.includes(this.marker)) {
              s.arrived = now - this.roundStart;
              if (++this.arrivedCount === this.streams.length) this.onAllArrived?.();
            }
          }
          s.pending = text;
        });
        res.on('error', () => {});
        this.streams.push(s);
        resolve();
      });
      req.on('error', reject);
      req.end();
      this.requests.push(req);
    });
  }

  async open(n: number): Promise<void> {
    const t0 = performance.now();
    for (let i = 0; i < n; i += 50) await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => this.openOne()));
    this.openMs = performance.now() - t0;
  }

  private write(body: string): Promise<number> {
    const t = this.t;
    return new Promise((resolve, reject) => {
      const b = Buffer.from(body);
      const t0 = performance.now();
      const req = https.request(
        { host: t.host, port: t.port, method: t.trigger.method, path: t.trigger.path, headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': b.length }, agent: this.writeAgent, ...this.tls },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            if (res.statusCode !== t.trigger.expectStatus) reject(new Error(`${t.name}: write answered ${res.statusCode}: ${Buffer.concat(chunks).toString().slice(0, 300)}`));
            else resolve(performance.now() - t0);
          });
        },
      );
      req.on('error', reject);
      req.end(b);
    });
  }

  async round(r: number, measured: boolean, timeoutMs: number): Promise<void> {
    for (const s of this.streams) s.arrived = -1;
    this.arrivedCount = 0;
    this.marker = `mk${r}x${randomBytes(4).toString('hex')}`;
    const done = new Promise<void>((resolve) => {
      this.onAllArrived = resolve;
      setTimeout(resolve, timeoutMs).unref();
    });
    this.roundStart = performance.now();
    const answered = this.write(this.t.trigger.body.replaceAll('__N__', this.marker));
    answered.catch(() => {}); // awaited below; a failure is reported there
    await done;
    const ans = await answered;
    this.onAllArrived = undefined;
    this.marker = '';
    if (!measured) return;
    const got = this.streams.filter((s) => s.arrived >= 0).map((s) => s.arrived);
    this.missed += this.streams.length - got.length;
    this.all.push(...got);
    const sum = latencySummary(got);
    this.p50s.push(sum.p50);
    this.p99s.push(sum.p99);
    this.lasts.push(sum.max);
    this.answers.push(ans);
  }

  close(): void {
    for (const req of this.requests) req.destroy();
    this.watchAgent.destroy();
    this.writeAgent.destroy();
  }

  result(): WatchResult {
    return {
      streams: this.streams.length,
      rounds: this.p99s.length,
      deliveryMs: latencySummary(this.all),
      roundP50Ms: this.p50s,
      roundP99Ms: this.p99s,
      lastArrivalMedianMs: round(median(this.lasts), 3),
      writeAnswerMedianMs: round(median(this.answers), 3),
      missed: this.missed,
      openMs: Math.round(this.openMs),
    };
  }
}

export interface WatchOutput {
  results: Record<string, WatchResult>;
  /** this process's CPU seconds and the wall seconds between "warm" and "end" */
  clientCpuSeconds: number;
  seconds: number;
}

async function run(cfg: WatchConfig): Promise<WatchOutput> {
  const sides = cfg.targets.map((t) => new Side(t));
  try {
    for (const s of sides) await s.open(cfg.streams);
    await sleep(300);
    const rounds = Math.min(cfg.rounds, 50) + cfg.warmupRounds;
    // run.ts reads the servers' CPU time at these two lines: the CPU the rounds cost them
    process.stdout.write('warm\n');
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let r = 0; r < rounds; r++) {
      // alternate which server goes first
      const order = r % 2 ? [...sides].reverse() : sides;
      for (const s of order) {
        await s.round(r, r >= cfg.warmupRounds, cfg.roundTimeoutMs);
        await sleep(cfg.pauseMs);
      }
    }
    process.stdout.write('end\n');
    const cpu = process.cpuUsage(cpu0);
    return {
      results: Object.fromEntries(sides.map((s) => [s.t.name, s.result()])),
      clientCpuSeconds: round((cpu.user + cpu.system) / 1e6, 3),
      seconds: round((performance.now() - t0) / 1000, 3),
    };
  } finally {
    for (const s of sides) s.close();
  }
}

const arg = process.argv[2];
if (!arg) {
  process.stderr.write("usage: watchers.js '<json config>'\n");
  process.exit(2);
}
run(JSON.parse(arg) as WatchConfig).then(
  (r) => {
    process.stdout.write(JSON.stringify(r) + '\n');
    process.exit(0);
  },
  (e) => {
    process.stderr.write(String(e?.stack ?? e) + '\n');
    process.exit(1);
  },
);
