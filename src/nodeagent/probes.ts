// Container probes and lifecycle hooks (pkg/kubelet/prober, lifecycle): exec through the runtime
// (ExecSync), httpGet (a status from 200 to 399 succeeds), tcpSocket (a connection that opens);
// grpc probes call grpc.health.v1.Health/Check (grpcProbe). A probe's result turns after failureThreshold
// failures or successThreshold successes in a row, every periodSeconds after initialDelaySeconds.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { grpcCodeName } from './cri.js';
import client from 'prom-client';

export interface ProbeTarget {
  podIP: string;
  containerID: string;
  execSync(containerID: string, cmd: string[], timeoutSeconds: number): Promise<{ stdout: Buffer; stderr: Buffer; exitCode: number }>;
  /** the container's ports by name, for a named port */
  ports: Record<string, number>;
}

export interface HandlerResult {
  ok: boolean;
  /**
   * what a probe's failure says (`Get "http://10.88.0.5:80/": dial tcp ...`); an exec's output
   * (stdout, then stderr)
   */
  output: string;
  /**
   * an exec handler's error, as the kubelet's runtime client words it: the command's non-zero exit
   * (`command 'sh -c exit 1' exited with 1: <stderr>`) or the runtime's error
   */
  error?: string;
  /** the exec could not be run at all (a runtime error, not an exit or a timeout): a probe's Unknown result */
  errored?: boolean;
}

/** the gRPC status code of a runtime error (CRIError), if it has one */
function grpcCode(e: unknown): number | undefined {
  const c = (e as { code?: unknown })?.code;
  return typeof c === 'number' ? c : undefined;
}

function portOf(port: unknown, t: ProbeTarget): number | undefined {
  if (typeof port === 'number') return port;
  if (typeof port === 'string' && /^\d+$/.test(port)) return Number(port);
  if (typeof port === 'string') return t.ports[port];
  return undefined;
}

/** runs one probe or hook handler (exec, httpGet, tcpSocket, sleep) once */
export async function runHandler(h: any, t: ProbeTarget, timeoutSeconds: number, o: { hook?: boolean } = {}): Promise<HandlerResult> {
  const timeoutMs = Math.max(1, timeoutSeconds) * 1000;
  if (h.exec) {
    // (the kubelet's RunInContainer: stdout and stderr joined; a non-zero exit is an error of the
    // runtime client's words, which a probe reports as a failure with the output alone)
    const cmd: string[] = h.exec.command ?? [];
    try {
      const r = await t.execSync(t.containerID, cmd, timeoutSeconds);
      const out = Buffer.concat([r.stdout, r.stderr]).toString('utf8');
      return r.exitCode === 0 ? { ok: true, output: out } : { ok: false, output: out, error: `command '${cmd.join(' ')}' exited with ${r.exitCode}: ${r.stderr.toString('utf8')}` };
    } catch (e) {
      // (a DeadlineExceeded is the runtime client's TimeoutError, a probe's failure with its text)
      if (grpcCode(e) === 4) return { ok: false, output: `command ${JSON.stringify(cmd.join(' '))} timed out`, error: `command ${JSON.stringify(cmd.join(' '))} timed out` };
      return { ok: false, output: '', error: (e as Error).message, errored: true };
    }
  }
  if (h.httpGet) {
    const g = h.httpGet;
    const port = portOf(g.port, t);
    const host = g.host || t.podIP;
    const scheme = (g.scheme || 'HTTP').toLowerCase();
    let path: string = g.path || '/';
    if (!path.startsWith('/')) path = '/' + path;
    const url = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;
    if (port === undefined) return { ok: false, output: `unable to find port ${JSON.stringify(g.port)}` };
    const headers: Record<string, string> = { 'User-Agent': 'kube-probe/1.33', Accept: '*/*' };
    for (const hh of g.httpHeaders ?? []) headers[hh.name] = hh.value;
    return await new Promise<HandlerResult>((resolve) => {
      const mod = scheme === 'https' ? https : http;
      const req = mod.request(url, { method: 'GET', headers, timeout: timeoutMs, rejectUnauthorized: false }, (res) => {
        const chunks: Buffer[] = [];
        let n = 0;
        res.on('data', (c: Buffer) => {
          if (n < 10240) chunks.push(c);
          n += c.length;
        });
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          const body = Buffer.concat(chunks).toString('utf8').slice(0, 10240);
          // (a lifecycle hook's answer is not judged: only a request that fails fails the hook)
          resolve(o.hook || (code >= 200 && code < 400) ? { ok: true, output: body } : { ok: false, output: `HTTP probe failed with statuscode: ${code}` });
        });
        res.on('error', (e) => resolve({ ok: false, output: `Get ${JSON.stringify(url)}: ${e.message}` }));
      });
      req.on('timeout', () => {
        req.destroy();
        resolve({ ok: false, output: `Get ${JSON.stringify(url)}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)` });
      });
      req.on('error', (e: any) => resolve({ ok: false, output: `Get ${JSON.stringify(url)}: dial tcp ${host}:${port}: connect: ${e.code === 'ECONNREFUSED' ? 'connection refused' : e.message}` }));
      req.end();
    });
  }
  if (h.tcpSocket) {
    const port = portOf(h.tcpSocket.port, t);
    const host = h.tcpSocket.host || t.podIP;
    if (port === undefined) return { ok: false, output: `unable to find port ${JSON.stringify(h.tcpSocket.port)}` };
    return await new Promise<HandlerResult>((resolve) => {
      const s = net.connect({ host, port, timeout: timeoutMs });
      s.once('connect', () => {
        s.destroy();
        resolve({ ok: true, output: '' });
      });
      s.once('timeout', () => {
        s.destroy();
        resolve({ ok: false, output: `dial tcp ${host}:${port}: i/o timeout` });
      });
      s.once('error', (e: any) => resolve({ ok: false, output: `dial tcp ${host}:${port}: connect: ${e.code === 'ECONNREFUSED' ? 'connection refused' : e.message}` }));
    });
  }
  if (h.sleep) {
    await new Promise((r) => setTimeout(r, Math.max(0, Number(h.sleep.seconds) || 0) * 1000));
    return { ok: true, output: '' };
  }
  if (h.grpc) return grpcProbe(t.podIP, Number(h.grpc.port), h.grpc.service ?? '', timeoutMs);
  return { ok: false, output: 'missing probe handler' };
}

export type ProbeKind = 'liveness' | 'readiness' | 'startup';

/** one container's probe: its result after the thresholds, and when it may run next */
export class ProbeState {
  result: boolean;
  private successes = 0;
  private failures = 0;
  private nextAt: number;
  running = false;
  lastOutput = '';

  constructor(
    readonly kind: ProbeKind,
    readonly probe: any,
    startedAt: number,
  ) {
    // readiness starts failed, liveness and startup succeeded... startup starts unknown (false), as the kubelet's manager
    this.result = kind === 'liveness';
    this.nextAt = startedAt + (probe.initialDelaySeconds ?? 0) * 1000;
  }

  due(now: number): boolean {
    return !this.running && now >= this.nextAt;
  }

  /** records one run; true when the result turned */
  record(ok: boolean, output: string, now: number): boolean {
    this.nextAt = now + (this.probe.periodSeconds ?? 10) * 1000;
    this.lastOutput = output;
    if (ok) {
      this.failures = 0;
      this.successes++;
      if (!this.result && this.successes >= (this.probe.successThreshold ?? 1)) {
        this.result = true;
        return true;
      }
    } else {
      this.successes = 0;
      this.failures++;
      if (this.result !== false && this.failures >= (this.probe.failureThreshold ?? 3)) {
        this.result = false;
        return true;
      }
      if (this.kind !== 'liveness' && this.result === false && this.failures === 1) return false;
    }
    return false;
  }

  /** failures in a row (a liveness or startup probe's restart comes at failureThreshold) */
  get failureCount(): number {
    return this.failures;
  }
}

// ---- grpc: grpc.health.v1.Health/Check ----

/** the two messages of the gRPC health protocol (grpc/health/v1/health.proto), declared here */
const HEALTH = protobuf.Root.fromJSON({
  nested: {
    HealthCheckRequest: { fields: { service: { type: 'string', id: 1 } } },
    HealthCheckResponse: { fields: { status: { type: 'int32', id: 1 } } },
  },
});
const HealthCheckRequest = HEALTH.lookupType('HealthCheckRequest');
const HealthCheckResponse = HEALTH.lookupType('HealthCheckResponse');
/** HealthCheckResponse.ServingStatus, as Go's String() names its values */
const SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

/** a duration as Go's %v prints it (1s, 1.5s) */
function goSeconds(ms: number): string {
  return `${ms / 1000}s`;
}

/**
 * The kubelet's grpc probe (pkg/probe/grpc): a plain-text connection to the pod's IP and port
 * within the timeout, then Health/Check of `service` within what is left of it; SERVING
 * succeeds. The failures read as the kubelet's: "timeout: failed to connect service ...", "service
 * unhealthy (responded with \"NOT_SERVING\")", "server does not implement the grpc health
 * protocol ...", "timeout: health rpc did not complete within 1s".
 */
export function grpcProbe(host: string, port: number, service: string, timeoutMs: number): Promise<HandlerResult> {
  const addr = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const deadline = Date.now() + timeoutMs;
  const client = new grpc.Client(addr, grpc.credentials.createInsecure(), { 'grpc.primary_user_agent': 'kube-probe/1.33' });
  return new Promise<HandlerResult>((resolve) => {
    const done = (r: HandlerResult) => {
      client.close();
      resolve(r);
    };
    client.waitForReady(deadline, (err) => {
      if (err) {
        done({ ok: false, output: `timeout: failed to connect service ${JSON.stringify(addr)} within ${goSeconds(timeoutMs)}: context deadline exceeded` });
        return;
      }
      client.makeUnaryRequest(
        '/grpc.health.v1.Health/Check',
        (req: { service: string }) => Buffer.from(HealthCheckRequest.encode(HealthCheckRequest.create(req)).finish()),
        (b: Buffer) => HealthCheckResponse.toObject(HealthCheckResponse.decode(b), { defaults: true }) as { status: number },
        { service },
        new grpc.Metadata(),
        { deadline },
        (e, res) => {
          if (e) {
            if (e.code === grpc.status.UNIMPLEMENTED) done({ ok: false, output: `server does not implement the grpc health protocol (grpc.health.v1.Health): rpc error: code = Unimplemented desc = ${e.details}` });
            else if (e.code === grpc.status.DEADLINE_EXCEEDED) done({ ok: false, output: `timeout: health rpc did not complete within ${goSeconds(timeoutMs)}` });
            else done({ ok: false, output: `error: health rpc probe failed: rpc error: code = ${grpcCodeName(e.code)} desc = ${e.details}` });
            return;
          }
          const status = res?.status ?? 0;
          if (status !== 1) done({ ok: false, output: `service unhealthy (responded with ${JSON.stringify(SERVING_STATUS[status] ?? String(status))})` });
          else done({ ok: true, output: 'service healthy' });
        },
      );
    });
  });
}

/**
 * The kubelet's /metrics/probes: prober_probe_total (by probe_type, result, container, pod,
 * namespace, pod_uid) and prober_probe_duration_seconds (by probe_type, container, pod, namespace),
 * counted by the pod workers as each probe answers.
 */
export class ProbeMetrics {
  readonly registry = new client.Registry();
  private readonly total = new client.Counter({
    name: 'prober_probe_total',
    help: '[ALPHA] Cumulative number of a liveness, readiness or startup probe for a container by result.',
    labelNames: ['container', 'namespace', 'pod', 'pod_uid', 'probe_type', 'result'],
    registers: [this.registry],
  });
  private readonly duration = new client.Histogram({
    name: 'prober_probe_duration_seconds',
    help: '[ALPHA] Duration in seconds for a probe response.',
    labelNames: ['container', 'namespace', 'pod', 'probe_type'],
    registers: [this.registry],
  });

  /** the label sets of each pod's series (by pod UID), to remove them when the pod goes */
  private readonly series = new Map<string, Map<string, { total: Record<string, string>[]; duration: Record<string, string> }>>();

  /** one probe's answer: `kind` liveness, readiness or startup */
  observe(pod: any, container: string, kind: string, ok: boolean, seconds: number): void {
    const probe_type = kind.charAt(0).toUpperCase() + kind.slice(1);
    const uid = String(pod?.metadata?.uid ?? '');
    const where = { container, namespace: String(pod?.metadata?.namespace ?? ''), pod: String(pod?.metadata?.name ?? ''), probe_type };
    const result = ok ? 'successful' : 'failed';
    // (labels in Go's order, sorted by name)
    this.total.inc({ container, namespace: where.namespace, pod: where.pod, pod_uid: uid, probe_type, result });
    this.duration.observe(where, seconds);
    let mine = this.series.get(uid);
    if (!mine) this.series.set(uid, (mine = new Map()));
    const key = `${container}/${probe_type}`;
    const known: { total: Record<string, string>[]; duration: Record<string, string> } = mine.get(key) ?? { total: [], duration: where };
    if (!known.total.some((l) => l.result === result)) known.total.push({ container, namespace: where.namespace, pod: where.pod, pod_uid: uid, probe_type, result });
    mine.set(key, known);
  }

  /** removes the series of a pod that is gone (as the kubelet's probe workers do when they stop) */
  forget(uid: string): void {
    for (const s of this.series.get(uid)?.values() ?? []) {
      for (const l of s.total) this.total.remove(l);
      this.duration.remove(s.duration);
    }
    this.series.delete(uid);
  }

  /** the Prometheus text */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
