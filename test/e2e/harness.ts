// End-to-end harness: starts a real `keelson` process on a free 127.0.0.1 port with its own data
// directory, waits for /readyz, and offers kubectl (any installed minor version) and raw HTTPS
// clients authenticated with the generated admin certificate. Every process it starts is
// stopped by stop().
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import https from 'node:https';
import { StringDecoder } from 'node:string_decoder';
import http2 from 'node:http2';
import YAML from 'yaml';
import { RunningClock, processState } from '../runningclock.js';

const here = dirname(fileURLToPath(import.meta.url));
/** repository root (this file runs from dist/test/e2e) */
export const ROOT = join(here, '..', '..', '..');
export const KEELSON = join(ROOT, 'bin', 'keelson');

const SDK_BIN = '/usr/lib/google-cloud-sdk/bin';

/**
 * The kubectl that `kubectl` on the PATH runs against a Keelson server. On this machine's image it
 * is the Google Cloud SDK's dispatcher, which picks the kubectl of the server's minor version
 * (v1.33.0+keelson: kubectl.1.33) and execs it; the dispatcher's own start costs about 0.1 s of CPU,
 * as much as the kubectl it runs, at every call. The tests' calls without a version run that
 * kubectl directly; `kubectlBinary('PATH')` still goes through the dispatcher (openapi.test's
 * `kubectl (PATH)` cases do).
 */
const pathKubectl: string = (() => {
  try {
    const onPath = (process.env.PATH ?? '').split(':').map((d) => join(d, 'kubectl')).find((f) => existsSync(f));
    if (onPath && realpathSync(onPath) === join(SDK_BIN, 'kubectl') && existsSync(join(SDK_BIN, 'kubectl.1.33'))) return join(SDK_BIN, 'kubectl.1.33');
  } catch {
    // (no PATH kubectl to resolve: run `kubectl` and let the spawn say so)
  }
  return 'kubectl';
})();

/**
 * The argv[0] the dispatcher gives the kubectl it execs (`kubectl`), for a call of that kubectl
 * without a version: kubectl's User-Agent begins with argv[0]'s base name (`kubectl/v1.33.1 ...`),
 * which the audit log records.
 */
export function kubectlArgv0(version?: string): { argv0?: string } {
  return !version && pathKubectl !== 'kubectl' ? { argv0: 'kubectl' } : {};
}

export function kubectlBinary(version?: string): string {
  if (version === 'PATH') return 'kubectl';
  if (!version) return pathKubectl;
  const p = join(SDK_BIN, `kubectl.${version}`);
  return existsSync(p) ? p : 'kubectl';
}

/** the first port of the kernel's ephemeral range (ports it gives to outgoing connections and to listen(0)) */
function ephemeralStart(): number {
  try {
    const lo = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(lo) && lo > 21_000 ? lo : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * A port free on 127.0.0.1 now, for a server a test starts later. It is taken below the kernel's
 * ephemeral range: a port of that range can become the local port of any outgoing connection of
 * any process (a controller's watch, kubectl) between this check and the server's bind, and
 * stay taken for as long as that connection lives.
 */
export { RunningClock, processState };

export async function freePort(): Promise<number> {
  const hi = ephemeralStart();
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * (hi - 20_000));
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.createServer();
      s.unref();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (ok) return port;
  }
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** every header as the list of its values, one per header line (Warning headers repeat) */
  headersDistinct: Record<string, string[]>;
  body: Buffer;
  text: string;
  json(): any;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A server argument for tests that count the ConfigMaps of a namespace: the controller manager
 * runs as usual but without the root-ca-certificate-publisher, which puts kube-root-ca.crt into
 * every namespace (as it does in Kubernetes).
 */
export const NO_CA_PUBLISHER = '--controllers=*,-root-ca-certificate-publisher-controller';
/**
 * The pod garbage collector off: for tests whose fixture pods name nodes that do not exist (it
 * deletes such pods 40 to 60 s after it first sees them, as Kubernetes' does). Combines with
 * NO_CA_PUBLISHER (repeated --controllers flags add up).
 */
export const NO_POD_GC = '--controllers=*,-pod-garbage-collector-controller';

export interface StartOptions {
  args?: string[];
  dataDir?: string;
  /** keep a data directory the test passed in after stop (the test removes it); one the harness made is always removed */
  keepData?: boolean;
  env?: Record<string, string>;
}

export class Cluster {
  proc?: ChildProcess;
  logs = '';
  readonly home: string;
  private agent?: https.Agent;
  private tls?: { ca: Buffer; cert: Buffer; key: Buffer };

  constructor(
    readonly port: number,
    readonly dataDir: string,
    private readonly opts: StartOptions,
  ) {
    this.home = mkdtempSync(join(tmpdir(), 'keelson-home-'));
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  get kubeconfig(): string {
    return join(this.dataDir, 'kubeconfig');
  }

  async launch(extraArgs: string[] = []): Promise<void> {
    const args = [KEELSON, 'server', '--data-dir', this.dataDir, '--secure-port', String(this.port), '--bind-address', '127.0.0.1', ...(this.opts.args ?? []), ...extraArgs];
    const proc = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...this.opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    proc.stdout!.on('data', (d) => (this.logs += d));
    proc.stderr!.on('data', (d) => (this.logs += d));
    const clock = new RunningClock();
    try {
      for (;;) {
        if (proc.exitCode !== null) throw new Error(`keelson exited with ${proc.exitCode} during start:\n${this.logs}`);
        try {
          let r = await this.rawNoAuth('GET', '/readyz');
          // with --anonymous-auth=false /readyz needs credentials, as in Kubernetes: the generated admin certificate
          if (r.status === 401) r = await this.readyzAsAdmin();
          if (r.status === 200) break;
        } catch {
          /* not listening yet */
        }
        if (clock.elapsed() > 30_000) {
          const state = processState(proc.pid);
          // (what the server wrote last may still be on its way)
          await new Promise((r) => setTimeout(r, 200));
          throw new Error(`keelson did not become ready in 30 s (${clock.describe()}; ${state}):\n${this.logs}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      clock.stop();
    }
    this.loadCredentials();
  }

  private loadCredentials(): void {
    const kc = YAML.parse(readFileSync(this.kubeconfig, 'utf8'));
    const cluster = kc.clusters[0].cluster;
    const user = kc.users[0].user;
    this.tls = {
      ca: Buffer.from(cluster['certificate-authority-data'], 'base64'),
      cert: Buffer.from(user['client-certificate-data'], 'base64'),
      key: Buffer.from(user['client-key-data'], 'base64'),
    };
    this.agent = new https.Agent({ ca: this.tls.ca, cert: this.tls.cert, key: this.tls.key, keepAlive: true, maxSockets: 64 });
  }

  get credentials(): { ca: Buffer; cert: Buffer; key: Buffer } {
    if (!this.tls) throw new Error('not started');
    return this.tls;
  }

  /** SIGTERM and wait for the process to exit */
  async stopProcess(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    const p = this.proc;
    this.agent?.destroy();
    if (!p || p.exitCode !== null) return p?.exitCode ?? null;
    const exited = new Promise<number | null>((r) => p.once('exit', (code) => r(code)));
    p.kill(signal);
    const timer = setTimeout(() => p.kill('SIGKILL'), 20_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  }

  async stop(): Promise<void> {
    await this.stopProcess();
    rmSync(this.home, { recursive: true, force: true });
    if (!this.opts.keepData || this.opts.dataDir === undefined) rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** run kubectl against this cluster (`version` picks kubectl.1.27 ... kubectl.1.33) */
  kubectl(args: string[], opts: { version?: string; input?: string; env?: Record<string, string>; timeoutMs?: number } = {}): RunResult {
    const r = spawnSync(kubectlBinary(opts.version), args, {
      ...kubectlArgv0(opts.version),
      env: { PATH: process.env.PATH ?? '', HOME: this.home, KUBECONFIG: this.kubeconfig, ...opts.env },
      input: opts.input,
      encoding: 'utf8',
      timeout: opts.timeoutMs ?? 60_000,
    });
    return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  }

  /** kubectl in the background (for -w); returns the process and its collected output */
  kubectlSpawn(args: string[], opts: { version?: string } = {}): { proc: ChildProcess; out: () => string; err: () => string } {
    const proc = spawn(kubectlBinary(opts.version), args, { ...kubectlArgv0(opts.version), env: { PATH: process.env.PATH ?? '', HOME: this.home, KUBECONFIG: this.kubeconfig } });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (err += d));
    return { proc, out: () => out, err: () => err };
  }

  /** a kubeconfig for a bearer token user (written once per name and token: kubectl processes may read it concurrently) */
  tokenKubeconfig(name: string, token: string): string {
    const key = `${name}\0${token}`;
    const known = this.tokenConfigs.get(key);
    if (known) return known;
    const kc = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'keelson', cluster: { server: this.url, 'certificate-authority-data': this.credentials.ca.toString('base64'), 'tls-server-name': 'localhost' } }],
      users: [{ name, user: { token } }],
      contexts: [{ name, context: { cluster: 'keelson', user: name } }],
      'current-context': name,
    };
    const path = this.file(`${name}-${this.tokenConfigs.size}.kubeconfig`, YAML.stringify(kc));
    this.tokenConfigs.set(key, path);
    return path;
  }
  private tokenConfigs = new Map<string, string>();

  /** kubectl without blocking this process (needed while the test itself must answer, e.g. a webhook) */
  kubectlAsync(args: string[], opts: { kubeconfig?: string; version?: string } = {}): Promise<RunResult> {
    return new Promise((resolve) => {
      const p = spawn(kubectlBinary(opts.version), args, { ...kubectlArgv0(opts.version), env: { PATH: process.env.PATH ?? '', HOME: this.home, KUBECONFIG: opts.kubeconfig ?? this.kubeconfig } });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d) => (stdout += d));
      p.stderr.on('data', (d) => (stderr += d));
      p.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
  }

  /** write a manifest into the cluster's temporary home and return its path */
  file(name: string, content: string): string {
    const p = join(this.home, name);
    writeFileSync(p, content);
    return p;
  }

  /** GET /readyz with the admin certificate the server generated in <data-dir>/pki (before the kubeconfig exists) */
  private readyzAsAdmin(): Promise<RawResponse> {
    const pki = join(this.dataDir, 'pki');
    return request({ host: '127.0.0.1', port: this.port, method: 'GET', path: '/readyz', rejectUnauthorized: false, cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')) });
  }

  rawNoAuth(method: string, path: string, opts: { headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<RawResponse> {
    return request({ host: '127.0.0.1', port: this.port, method, path, headers: opts.headers, rejectUnauthorized: false }, opts.body);
  }

  /** an HTTPS request as the admin user */
  raw(method: string, path: string, opts: { headers?: Record<string, string>; body?: string | Buffer | object } = {}): Promise<RawResponse> {
    let body = opts.body;
    const headers = { ...(opts.headers ?? {}) };
    if (body !== undefined && typeof body === 'object' && !Buffer.isBuffer(body)) {
      body = JSON.stringify(body);
      headers['content-type'] ??= 'application/json';
    }
    return request({ host: '127.0.0.1', port: this.port, method, path, headers, agent: this.agent, servername: 'localhost' }, body as string | Buffer | undefined);
  }

  /** an open streaming GET (watch): events are collected as they arrive; over HTTP/1.1, or as a stream of an HTTP/2 session */
  stream(path: string, headers: Record<string, string> = {}, session?: http2.ClientHttp2Session): Stream {
    return new Stream(this, path, headers, this.agent!, session);
  }

  http2Session(): http2.ClientHttp2Session {
    const t = this.credentials;
    return http2.connect(this.url, { ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost' });
  }
}

export class Stream {
  status = 0;
  headers: Record<string, string | string[] | undefined> = {};
  chunks: Buffer[] = [];
  ended = false;
  private readonly cancel: () => void;
  private waiters: (() => void)[] = [];
  readonly ready: Promise<void>;

  constructor(c: Cluster, path: string, headers: Record<string, string>, agent: https.Agent, session?: http2.ClientHttp2Session) {
    let ready!: () => void;
    this.ready = new Promise((r) => (ready = r));
    const answered = (status: number, h: Record<string, string | string[] | undefined>) => {
      this.status = status;
      this.headers = h;
      ready();
      this.notify();
    };
    const data = (d: Buffer) => {
      this.chunks.push(d);
      this.notify();
    };
    const end = () => {
      this.ended = true;
      ready();
      this.notify();
    };
    if (session) {
      const req = session.request({ ':path': path, ...headers });
      req.on('response', (h) => answered(Number(h[':status']), h as Record<string, string | string[] | undefined>));
      req.on('data', data);
      req.on('end', end);
      req.on('close', end);
      req.on('error', end);
      this.cancel = () => req.close(http2.constants.NGHTTP2_CANCEL);
      return;
    }
    const req = https.request({ host: '127.0.0.1', port: c.port, path, method: 'GET', headers, agent, servername: 'localhost' }, (res) => {
      answered(res.statusCode ?? 0, res.headers);
      res.on('data', data);
      res.on('end', end);
      res.on('error', end);
    });
    req.on('error', end);
    req.end();
    this.cancel = () => req.destroy();
  }

  private notify() {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  get text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }

  private parsed: any[] = [];
  private parsedChunks = 0;
  private unparsed = '';
  private readonly decoder = new StringDecoder('utf8');
  private parseError?: Error;

  /** the JSON events received so far (each whole line parsed once; a last line without its newline yet, as it parses now) */
  events(): any[] {
    if (this.parseError) throw this.parseError;
    try {
      for (; this.parsedChunks < this.chunks.length; this.parsedChunks++) {
        this.unparsed += this.decoder.write(this.chunks[this.parsedChunks]!);
        const nl = this.unparsed.lastIndexOf('\n');
        if (nl < 0) continue;
        for (const l of this.unparsed.slice(0, nl).split('\n')) if (l.trim()) this.parsed.push(JSON.parse(l));
        this.unparsed = this.unparsed.slice(nl + 1);
      }
      return this.unparsed.trim() ? [...this.parsed, JSON.parse(this.unparsed)] : this.parsed.slice();
    } catch (e) {
      this.parseError = e as Error;
      throw e;
    }
  }

  /** wait until pred holds on the events, the stream ends, or the time is up; answers whether pred holds */
  async waitFor(pred: (events: any[]) => boolean, timeoutMs = 10_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (pred(this.events())) return true;
      const left = deadline - Date.now();
      if (this.ended || left <= 0) return false;
      await this.next(left);
    }
  }

  /** wait until pred holds on the events (or the stream ends) */
  async until(pred: (events: any[]) => boolean, timeoutMs = 10_000): Promise<any[]> {
    if (await this.waitFor(pred, timeoutMs)) return this.events();
    const got = JSON.stringify(this.events()).slice(0, 2000);
    throw new Error(this.ended ? `stream ended before condition; got ${got}` : `timed out waiting on stream; got ${got}`);
  }

  async untilEnd(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      if (Date.now() > deadline) throw new Error('stream did not end');
      await this.next(100);
    }
  }

  /** the next chunk, the end, or ms, whichever comes first */
  private next(ms: number): Promise<void> {
    return new Promise<void>((r) => {
      const t = setTimeout(r, ms);
      this.waiters.push(() => {
        clearTimeout(t);
        r();
      });
    });
  }

  close(): void {
    this.cancel();
  }
}

function request(opts: https.RequestOptions, body?: string | Buffer, retried = false): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...(opts.headers as Record<string, string>) };
    if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
    const req = https.request({ ...opts, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const b = Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          headersDistinct: res.headersDistinct as Record<string, string[]>,
          body: b,
          text: b.toString('utf8'),
          json: () => JSON.parse(b.toString('utf8')),
        });
      });
      res.on('error', reject);
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      // a kept-alive connection the server closed while it was idle (its 90 s IdleTimeout, passed
      // while this process was blocked in a spawnSync): sent again on a new one, once, as Go's
      // transport does when the server closed an idle connection before reading the request
      if (!retried && req.reusedSocket && e.code === 'ECONNRESET') resolve(request(opts, body, true));
      else reject(e);
    });
    req.setTimeout(30_000, () => req.destroy(new Error('request timed out')));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** Start a cluster on a fresh data directory (or the given one) and a free port. */
export async function startCluster(opts: StartOptions = {}): Promise<Cluster> {
  const port = await freePort();
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'keelson-data-'));
  const c = new Cluster(port, dataDir, opts);
  try {
    await c.launch();
  } catch (e) {
    await c.stop();
    throw e;
  }
  return c;
}

/** stops a process a test started: SIGTERM, then SIGKILL after `graceMs`; resolves once it exited */
export async function stopProcess(p: ChildProcess | undefined, graceMs = 10_000): Promise<void> {
  if (!p || p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  const t = setTimeout(() => p.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(t);
}

/** poll f every 100 ms until it answers something truthy; throws after timeoutMs of running time (RunningClock) */
export async function until<T>(what: string, f: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const clock = new RunningClock();
  try {
    for (;;) {
      const v = await f();
      if (v) return v;
      if (clock.elapsed() > timeoutMs) throw new Error(`timed out waiting for ${what} (${clock.describe()})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    clock.stop();
  }
}

/**
 * Takes the Lease at `path` over for `someone-else` (60 s), as another candidate's renewal would:
 * the holder renews meanwhile, so a write on the version read may meet its renewal (409) and is
 * made again on the newer one.
 */
export async function takeOverLease(c: Cluster, path: string): Promise<void> {
  await until(
    'the Lease taken over',
    async () => {
      const lease = (await c.raw('GET', path)).json();
      const now = new Date().toISOString().replace('Z', '000Z');
      const taken = { ...lease, spec: { ...lease.spec, holderIdentity: 'someone-else', renewTime: now, acquireTime: now, leaseDurationSeconds: 60 } };
      const put = await c.raw('PUT', path, { body: taken });
      if (put.status !== 200 && put.status !== 409) throw new Error(`taking the Lease over: ${put.status} ${put.text}`);
      return put.status === 200;
    },
    10_000,
  );
}

/**
 * Waits for the namespace's `default` ServiceAccount, which the service account controller makes
 * after the namespace appears: until then a pod that names no account is refused (403, `error
 * looking up service account`), as in Kubernetes. A test that creates pods at once after a start
 * or in a new namespace waits for it, or it fails when the machine is loaded.
 */
export async function defaultServiceAccount(c: Cluster, namespace: string): Promise<void> {
  await until(`the default ServiceAccount of ${namespace}`, async () => (await c.raw('GET', `/api/v1/namespaces/${namespace}/serviceaccounts/default`)).status === 200);
}

/** the Status body of a failed request, after checking its code and reason */
/** a namespaced CustomResourceDefinition of `<plural>.<group>` (more of its spec in `spec`) */
export function crdBody(group: string, plural: string, kind: string, versions: unknown[], spec: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: { group, scope: 'Namespaced', names: { plural, singular: kind.toLowerCase(), kind }, versions, ...spec },
  };
}

/** creates a CRD and waits until kubectl sees it established */
export async function createCRD(c: Cluster, body: any): Promise<void> {
  const r = await c.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body });
  if (r.status !== 201) throw new Error(`creating CRD ${body.metadata.name}: ${r.status} ${r.text}`);
  const k = c.kubectl(['wait', '--for', 'condition=established', '--timeout=30s', `crd/${body.metadata.name}`]);
  if (k.code !== 0) throw new Error(`CRD ${body.metadata.name} not established: ${k.stderr}`);
}

export function expectStatus(r: RawResponse, code: number, reason: string, what = ''): any {
  let s: any;
  try {
    s = r.json();
  } catch {
    throw new Error(`${what}: expected a Status ${code} ${reason}, got ${r.status} ${r.text.slice(0, 500)}`);
  }
  const got = { status: r.status, kind: s.kind, apiVersion: s.apiVersion, code: s.code, reason: s.reason, statusField: s.status };
  const want = { status: code, kind: 'Status', apiVersion: 'v1', code, reason, statusField: 'Failure' };
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${what}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}: ${r.text.slice(0, 800)}`);
  return s;
}

/** the Warning header values of a response, one per header line */
export function warningsOf(r: RawResponse): string[] {
  return r.headersDistinct['warning'] ?? [];
}

/** now, to the second, as the API server's times are written */
const nowSeconds = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/** the Ready condition a kubelet posts in its Node's status, its heartbeat and transition at `at` (default now) */
export function nodeReadyCondition(at = nowSeconds()): Record<string, string> {
  return { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: at, lastTransitionTime: at };
}

export interface ReadyNodeOptions {
  /** labels besides kubernetes.io/hostname=<name> and kubernetes.io/os=linux, which it always has */
  labels?: Record<string, string>;
  /** spec.taints (none by default) */
  taints?: unknown[];
  /** its capacity and allocatable, the same (default cpu 2, memory 4Gi, pods 110) */
  resources?: Record<string, string>;
  /**
   * take off the node.kubernetes.io/not-ready:NoSchedule taint the TaintNodesByCondition admission
   * puts on a new Node, as the node lifecycle controller does once it is Ready (default true: for
   * clusters that run without that controller; false where the controller itself is under test)
   */
  removeNotReadyTaint?: boolean;
}

/**
 * a fake Node, as a kubelet would register it, for the scheduler and the controllers to see: created
 * with its labels and taints, then Ready with its resources through nodes/status, written once (no
 * kubelet renews it: a node lifecycle controller would find it unreachable after its grace period).
 * Returns the Node as it then is.
 */
export async function readyNode(c: Cluster, name: string, opts: ReadyNodeOptions = {}): Promise<any> {
  const taints = opts.taints ?? [];
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', ...opts.labels } }, spec: taints.length ? { taints } : {} };
  const r = await c.raw('POST', '/api/v1/nodes', { body: node });
  if (r.status !== 201) throw new Error(`creating Node ${name}: ${r.status} ${r.text}`);
  const resources = opts.resources ?? { cpu: '2', memory: '4Gi', pods: '110' };
  const st = await c.raw('PATCH', `/api/v1/nodes/${name}/status`, {
    body: JSON.stringify({ status: { capacity: resources, allocatable: resources, conditions: [nodeReadyCondition()] } }),
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  if (st.status !== 200) throw new Error(`making Node ${name} Ready: ${st.status} ${st.text}`);
  if (opts.removeNotReadyTaint === false) return st.json();
  const t = c.kubectl(['taint', 'node', name, 'node.kubernetes.io/not-ready:NoSchedule-'], { version: '1.32' });
  if (t.code !== 0 && !/not found/.test(t.stderr)) throw new Error(`taking the not-ready taint off Node ${name}: ${t.stderr}`);
  const got = await c.raw('GET', `/api/v1/nodes/${name}`);
  if (got.status !== 200) throw new Error(`reading Node ${name}: ${got.status} ${got.text}`);
  return got.json();
}
