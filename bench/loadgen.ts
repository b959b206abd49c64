// The load generator: a process of its own that drives one HTTPS server with `concurrency`
// clients, each sending its next request as soon as its previous answer has been read, over an
// https.Agent with keep-alive and `concurrency` sockets. It runs for warmupMs, then measures for
// durationMs (bounded also by maxRequests), and prints one JSON line of figures. It knows nothing
// of the server it drives: Keelson and the bare server get the very same requests.
//
//   node dist/bench/loadgen.js '<json LoadConfig>'
//
// While it runs it prints "warm" when the measured window starts and "end" when it ends (run.ts
// samples the server's CPU time at those moments), then the result line.
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { ClientTLS } from './common.js';
import { latencySummary, round, type Latency } from './common.js';

export interface LoadConfig {
  host: string;
  port: number;
  servername: string;
  tls: ClientTLS;
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  /** request body; every "__N__" in it is replaced by a token unique to the request (and the run) */
  body?: string;
  contentType?: string;
  /** the status every answer should have; others are counted as failures */
  expectStatus: number;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /** a hard bound on requests sent (warm-up included) */
  maxRequests: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  perSec: number;
  latencyMs: Latency;
  failures: number;
  statuses: Record<string, number>;
  errors: string[];
  /** body bytes of the answers measured, per answer */
  answerBytes: number;
  /** the load generator's own CPU use during the measured window (1.0 = one core busy) */
  clientCores: number;
}

function run(cfg: LoadConfig): Promise<LoadResult> {
  const agent = new https.Agent({
    keepAlive: true,
    maxSockets: cfg.concurrency,
    maxFreeSockets: cfg.concurrency,
    ca: cfg.tls.ca,
    cert: cfg.tls.cert,
    key: cfg.tls.key,
    servername: cfg.servername,
  });
  const template = cfg.body;
  const templated = template !== undefined && template.includes('__N__');
  const fixedBody = template !== undefined && !templated ? Buffer.from(template) : undefined;
  const headers: Record<string, string | number> = { accept: 'application/json' };
  if (template !== undefined) headers['content-type'] = cfg.contentType ?? 'application/json';

  // names made unique across runs: "__N__" becomes <run>-<worker>-<seq>
  const runTag = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
  const lat = new Float64Array(cfg.maxRequests);
  let measured = 0;
  let sent = 0;
  let failures = 0;
  let answerBytes = 0;
  const statuses: Record<string, number> = {};
  const errors: string[] = [];
  const t0 = performance.now();
  const warmEnd = t0 + cfg.warmupMs;
  const end = warmEnd + cfg.durationMs;
  let cpuAtWarm: NodeJS.CpuUsage | undefined;
  let cpuWindow = -1;
  const warmTimer = setTimeout(() => {
    cpuAtWarm = process.cpuUsage();
    process.stdout.write('warm\n');
  }, cfg.warmupMs);
  const endWindow = () => {
    if (cpuWindow >= 0 || !cpuAtWarm) return;
    const u = process.cpuUsage(cpuAtWarm);
    cpuWindow = (u.user + u.system) / 1e6;
    process.stdout.write('end\n');
  };
  const endTimer = setTimeout(endWindow, cfg.warmupMs + cfg.durationMs);

  const one = (worker: number, seq: number): Promise<void> =>
    new Promise((resolve) => {
      let body = fixedBody;
      if (templated) body = Buffer.from(template!.replaceAll('__N__', `${runTag}-${worker}-${seq}`));
      const h = body ? { ...headers, 'content-length': body.length } : headers;
      const start = performance.now();
      const req = https.request({ host: cfg.host, port: cfg.port, method: cfg.method, path: cfg.path, headers: h, agent, servername: cfg.servername }, (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () => {
          const now = performance.now();
          const code = res.statusCode ?? 0;
          if (now >= warmEnd && now <= end) {
            statuses[code] = (statuses[code] ?? 0) + 1;
            if (code === cfg.expectStatus) {
              lat[measured++] = now - start;
              answerBytes += n;
            } else failures++;
          } else if (code !== cfg.expectStatus) failures++;
          resolve();
        });
        res.on('error', (e) => {
          failures++;
          if (errors.length < 5) errors.push(String(e));
          resolve();
        });
      });
      req.setTimeout(30_000, () => req.destroy(new Error('no answer in 30 s')));
      req.on('error', (e) => {
        failures++;
        if (errors.length < 5) errors.push(String(e));
        resolve();
      });
      req.end(body);
    });

  const worker = async (w: number) => {
    for (let seq = 0; ; seq++) {
      if (performance.now() >= end || sent >= cfg.maxRequests || failures > 1000) return;
      sent++;
      await one(w, seq);
    }
  };
  return Promise.all(Array.from({ length: cfg.concurrency }, (_, w) => worker(w))).then(() => {
    clearTimeout(warmTimer);
    clearTimeout(endTimer);
    endWindow(); // the last answers may come in before the timer fires
    agent.destroy();
    const seconds = Math.min(performance.now(), end) - warmEnd;
    return {
      requests: measured,
      seconds: round(seconds / 1000, 3),
      perSec: Math.round((measured * 1000) / Math.max(1, seconds)),
      latencyMs: latencySummary(lat.subarray(0, measured)),
      failures,
      statuses,
      errors,
      answerBytes: measured ? Math.round(answerBytes / measured) : 0,
      clientCores: round(Math.max(0, cpuWindow) / (cfg.durationMs / 1000), 2),
    };
  });
}

const arg = process.argv[2];
if (!arg) {
  process.stderr.write("usage: loadgen.js '<json config>'\n");
  process.exit(2);
}
run(JSON.parse(arg) as LoadConfig).then(
  (r) => process.stdout.write(JSON.stringify(r) + '\n'),
  (e) => {
    process.stderr.write(String(e?.stack ?? e) + '\n');
    process.exit(1);
  },
);
