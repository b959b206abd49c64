// Helpers shared by the end-to-end benchmark processes (run.ts, loadgen.ts, watchers.ts, bare.ts):
// TLS material, percentiles, one-off HTTPS requests, process start/stop, /proc memory figures.
// Everything here talks to 127.0.0.1 only.
import https from 'node:https';
import net from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import type { LoadConfig, LoadResult } from './loadgen.js';

/** client TLS material (PEM) read from the kubeconfig Keelson writes: CA, admin cert and key */
export interface ClientTLS {
  ca: string;
  cert: string;
  key: string;
}

/** Reads the first cluster's CA and the first user's client certificate from a kubeconfig. */
export function clientTLSFromKubeconfig(path: string): ClientTLS {
  // the kubeconfig is YAML written by Keelson with flat `key: value` lines for the data fields;
  // the three base64 fields are all we need, so no YAML parser is pulled into the load generator
  const text = readFileSync(path, 'utf8');
  const field = (name: string): string => {
    const m = new RegExp(`${name}:\\s*(\\S+)`).exec(text);
    if (!m) throw new Error(`${path}: no ${name}`);
    return Buffer.from(m[1]!.replace(/^["']|["']$/g, ''), 'base64').toString('utf8');
  };
  return { ca: field('certificate-authority-data'), cert: field('client-certificate-data'), key: field('client-key-data') };
}

export interface Target {
  host: string;
  port: number;
  /** name checked against the serving certificate (Keelson's has localhost and 127.0.0.1) */
  servername: string;
  tls: ClientTLS;
}

export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export const round = (x: number, d = 2): number => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : x);

export interface Latency {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** percentiles (ms) of a list of latencies in ms; sorts its argument */
export function latencySummary(ms: Float64Array | number[]): Latency {
  const a = ms instanceof Float64Array ? ms.sort() : Float64Array.from(ms).sort();
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]!;
  return {
    p50: round(percentile(a, 50), 3),
    p90: round(percentile(a, 90), 3),
    p99: round(percentile(a, 99), 3),
    max: round(a.length ? a[a.length - 1]! : NaN, 3),
    mean: round(a.length ? sum / a.length : NaN, 3),
  };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** ms from sending the request to the last byte of the answer */
  ms: number;
}

/** one HTTPS request, the whole answer read */
export function request(t: Target, agent: https.Agent | undefined, method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string | number> = { accept: 'application/json', ...headers };
    if (body !== undefined) {
      h['content-type'] ??= 'application/json';
      h['content-length'] = Buffer.byteLength(body);
    }
    const t0 = performance.now();
    const req = https.request(
      {
        host: t.host,
        port: t.port,
        method,
        path,
        headers: h,
        agent,
        servername: t.servername,
        ca: t.tls.ca,
        cert: t.tls.cert,
        key: t.tls.key,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), ms: performance.now() - t0 }));
        res.on('error', reject);
      },
    );
    req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${path}: no answer in 60 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

export function agentFor(t: Target, maxSockets: number): https.Agent {
  return new https.Agent({ keepAlive: true, maxSockets, ca: t.tls.ca, cert: t.tls.cert, key: t.tls.key, servername: t.servername });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** HTTPS GET without a client certificate, for /readyz; resolves to the status or 0 */
export function probe(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = https.request({ host: '127.0.0.1', port, path, method: 'GET', rejectUnauthorized: false, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.setTimeout(2000, () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited */
export async function stopChild(p: ChildProcess | undefined, graceMs = 10_000): Promise<void> {
  if (!p || p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.once('exit', () => r()));
  p.kill('SIGTERM');
  const timer = setTimeout(() => p.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** VmRSS, VmHWM (peak RSS) of a process in MiB, from /proc/<pid>/status */
export function procMemory(pid: number): { rssMiB: number; peakRssMiB: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN);
  return { rssMiB: round(kb('VmRSS') / 1024, 1), peakRssMiB: round(kb('VmHWM') / 1024, 1) };
}

/** user and system CPU seconds from a /proc stat line (a process's or a thread's) */
function statCPUSeconds(stat: string): { user: number; sys: number } {
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // f[11] = utime, f[12] = stime (after pid and comm), in clock ticks (100 Hz on Linux)
  return { user: Number(f[11]) / 100, sys: Number(f[12]) / 100 };
}

/** user+system CPU seconds a process has used, from /proc/<pid>/stat */
export function procCPUSeconds(pid: number): number {
  const { user, sys } = statCPUSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  return user + sys;
}

/**
 * CPU seconds of a process's threads, from /proc/<pid>/task/<tid>/stat: its main thread (the one
 * whose id is the process id: Node's event loop) apart, user and system time, and all its other
 * threads together (worker threads, V8's GC and compiler helpers, libuv's pool). Threads that
 * ended since an earlier reading are missing from the sum, so compare readings of a process whose
 * threads live on (a server under load).
 */
export function threadCPUSeconds(pid: number): { mainUser: number; mainSys: number; others: number } {
  let mainUser = 0;
  let mainSys = 0;
  let others = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let s: string;
    try {
      s = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended
    }
    const { user, sys } = statCPUSeconds(s);
    if (Number(tid) === pid) {
      mainUser = user;
      mainSys = sys;
    } else others += user + sys;
  }
  return { mainUser, mainSys, others };
}

/**
 * busy and total CPU ticks of the whole machine, from /proc/stat (busy excludes idle and iowait),
 * and steal: ticks a virtual machine's CPUs were ready to run but the hypervisor ran something
 * else (counted in busy; on a shared host one source of round-to-round noise)
 */
export function machineCPUTicks(): { busy: number; total: number; steal: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = v[3]! + v[4]!;
  return { busy: total - idle, total, steal: v[7] ?? 0 };
}

/** the value after `--name` on the command line (undefined when not given) */
export function cliOption(name: string, argv: readonly string[] = process.argv.slice(2)): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const DATA_1K = 'x'.repeat(1024 - 150);

/** the creates load's object: a ConfigMap of about 1 KB (name `bench-__N__` for loadgen's unique names) */
export function benchConfigMap(name: string, extra: Record<string, string> = {}): string {
  const o = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'bench', tier: 'load' } }, data: { payload: DATA_1K, ...extra } };
  return JSON.stringify(o);
}

/** a pod as a ReplicaSet of a Deployment makes it, with the fields defaulting fills in (about 3 KB; it runs as ServiceAccount `web` of its namespace) */
export function benchPod(i: number): string {
  const hash = '7d9f8c6b5d';
  const rs = `web-${hash}`;
  const o = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${rs}-${i.toString(36).padStart(5, '0')}`,
      namespace: 'default',
      labels: { app: 'web', 'pod-template-hash': hash, 'app.kubernetes.io/name': 'web', 'app.kubernetes.io/part-of': 'shop', tier: 'frontend' },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-01-01T00:00:00Z', 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9090' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs, uid: '0b6a3c56-3a52-4e38-9f1d-6d2b9a1c0e11', controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'registry.example.com/shop/web:1.24.3',
          imagePullPolicy: 'IfNotPresent',
          args: ['--listen=:8080', '--metrics=:9090', '--log-level=info'],
          ports: [
            { name: 'http', containerPort: 8080, protocol: 'TCP' },
            { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
          ],
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
            { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
            { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'web-db', key: 'url' } } },
            { name: 'CACHE_SIZE', value: '256' },
          ],
          resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } },
          livenessProbe: { httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' }, initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
          readinessProbe: { httpGet: { path: '/ready', port: 8080, scheme: 'HTTP' }, periodSeconds: 5, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
          volumeMounts: [
            { name: 'config', mountPath: '/etc/web', readOnly: true },
            { name: 'kube-api-access-x7k2p', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
          ],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } },
        },
      ],
      volumes: [
        { name: 'config', configMap: { name: 'web-config', defaultMode: 420 } },
        {
          name: 'kube-api-access-x7k2p',
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
            ],
          },
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'web',
      serviceAccount: 'web',
      nodeName: `node-${i % 50}`,
      securityContext: { runAsUser: 1000, fsGroup: 2000 },
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
  };
  return JSON.stringify(o);
}

/** the Nodes `node-0` to `node-49` that benchPod binds Pods to */
export async function createBenchNodes(t: Target): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const node = await request(t, undefined, 'POST', '/api/v1/nodes', JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: `node-${i}` } }));
    if (node.status !== 201 && node.status !== 409) throw new Error(`POST node node-${i}: ${node.status}`);
  }
}

/**
 * creates ServiceAccount `web`, the Nodes `node-0` to `node-49` the Pods are bound to (as in a
 * cluster, where a pod names a node that exists: the pod garbage collector deletes the pods of
 * nodes that do not), and `n` Pods (benchPod) in namespace default, 64 at a time from this process
 */
export async function createBenchPods(t: Target, n: number): Promise<void> {
  const sa = await request(t, undefined, 'POST', '/api/v1/namespaces/default/serviceaccounts', JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'web' } }));
  if (sa.status !== 201) throw new Error(`POST serviceaccount web: ${sa.status}`);
  await createBenchNodes(t);
  const agent = agentFor(t, 64);
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < n) {
          const r = await request(t, agent, 'POST', '/api/v1/namespaces/default/pods', benchPod(next++));
          if (r.status !== 201) throw new Error(`POST pod: ${r.status} ${r.body.toString().slice(0, 200)}`);
        }
      }),
    );
  } finally {
    agent.destroy();
  }
}

/**
 * One run of the load generator (bench/loadgen.ts) against a server process, with the server's
 * CPU time read when the load generator says "warm" and "end": the result and the server's CPU
 * per request in the measured window (µs). Fails on a non-zero exit, or on failed requests when
 * `strict`.
 */
export function loadWithServerCPU(cfg: LoadConfig, serverPid: number, strict = false): Promise<{ load: LoadResult; cpuUsPerRequest: number }> {
  return new Promise((res, rej) => {
    const script = join(dirname(fileURLToPath(import.meta.url)), 'loadgen.js');
    const lg = spawn(process.execPath, [script, JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let cpu0 = 0;
    let t0 = 0;
    let used = 0;
    let secs = 0;
    let load: LoadResult | undefined;
    onLines(lg.stdout!, (line) => {
      if (line === 'warm') {
        cpu0 = procCPUSeconds(serverPid);
        t0 = performance.now();
      } else if (line === 'end') {
        used = procCPUSeconds(serverPid) - cpu0;
        secs = (performance.now() - t0) / 1000;
      } else if (line.startsWith('{')) load = JSON.parse(line) as LoadResult;
    });
    lg.once('exit', (code) => {
      if (code !== 0 || !load) return rej(new Error(`loadgen exited with ${code}`));
      if (strict && load.failures > 0) return rej(new Error(`${load.failures} failed requests (${load.errors.join('; ')})`));
      res({ load, cpuUsPerRequest: Math.round((used * 1e6) / (load.perSec * secs)) });
    });
  });
}

/** the repository's root (dist/bench/ is two levels below it) */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * `keelson server` on a fresh data directory and a free port of 127.0.0.1, once its /readyz
 * answers 200: `nodeArgs` go before the script (node flags, --import), `dir` is the checkout whose
 * bin/keelson runs (default this one); stdio as spawn takes it (default ignored).
 */
export async function startKeelson(
  dataDir: string,
  o: { nodeArgs?: string[]; dir?: string; env?: Record<string, string>; args?: string[]; stdio?: StdioOptions; label?: string; cwd?: string } = {},
): Promise<{ proc: ChildProcess; target: Target }> {
  const port = await freePort();
  const dir = o.dir ?? ROOT;
  const label = o.label ?? 'keelson';
  const argv = [...(o.nodeArgs ?? []), join(dir, 'bin', 'keelson'), 'server', '--data-dir', dataDir, '--secure-port', String(port), '--bind-address', '127.0.0.1', ...(o.args ?? [])];
  // (`cwd`: where files the process writes by itself go, e.g. V8's code log under --perf-basic-prof)
  const proc = spawn(process.execPath, argv, { cwd: o.cwd ?? dir, env: { ...process.env, ...o.env }, stdio: o.stdio ?? 'ignore' });
  const deadline = Date.now() + 30_000;
  while ((await probe(port, '/readyz')) !== 200) {
    if (proc.exitCode !== null) throw new Error(`${label} exited with ${proc.exitCode}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`${label} not ready in 30 s`);
    }
    await sleep(20);
  }
  return { proc, target: { host: '127.0.0.1', port, servername: 'localhost', tls: clientTLSFromKubeconfig(join(dataDir, 'kubeconfig')) } };
}

/** resolves when a helper process writes a line starting with `prefix` on its stdout (bare.ts and lean-echo.ts write "listening <port>") */
export function untilLine(proc: ChildProcess, prefix: string, timeoutMs: number, what: string): Promise<void> {
  return new Promise<void>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`${what}: no "${prefix}" line in ${timeoutMs / 1000} s`)), timeoutMs);
    onLines(proc.stdout!, (line) => {
      if (line.startsWith(prefix)) {
        clearTimeout(timer);
        res();
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`${what} exited (${code})`));
    });
  });
}

/** calls fn with each line (without its newline) a helper process writes */
export function onLines(stream: NodeJS.ReadableStream, fn: (line: string) => void): void {
  let out = '';
  stream.on('data', (d: Buffer) => {
    out += d.toString();
    let nl: number;
    while ((nl = out.indexOf('\n')) >= 0) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      fn(line);
    }
  });
}
