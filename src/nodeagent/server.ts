// The handlers of the kubelet's HTTP ports (pkg/kubelet/server/server.go), over a view of the
// node agent (NodeAgentView). The ports themselves (TLS, authentication, authorization) are
// cli/kubeletserving.ts'; what each serves:
//
//   main port (10250)        default handlers + debugging handlers (or, with
//                            --enable-debugging-handlers=false, the "disabled" answers)
//   read-only port (10255)   default handlers + the "disabled" answers (NewServer with no config)
//   health port (10248)      /healthz with the ping check only (healthz.InstallHandler(mux))
//
// Default handlers: /healthz (checks ping, log, syncloop; /healthz/<check>; ?verbose, ?exclude,
// worded as k8s.io/apiserver's healthz), /pods (a v1 PodList of the pods bound to the node), /metrics
// (Prometheus text: kubelet_running_pods, kubelet_running_containers, kubelet_node_name and the
// process's metrics; a registry the agent may add to), /metrics/probes (prober_probe_total and
// prober_probe_duration_seconds: probes.ts), /metrics/resource, /metrics/cadvisor and
// /stats/summary (the node's and its containers' CPU and memory, the node's file systems, the pods'
// storage: stats.ts). Not served (404): the rest of /stats/, /checkpoint/ (Keelson's node agent
// has no checkpointing runtime yet).
//
// Debugging handlers: /containerLogs/{namespace}/{pod}/{container} (GET, the PodLogOptions in the
// query, as the API server sends them; the log streamed as the kubelet streams it, see logs.ts),
// /configz, /runningpods/, and the kubelet's streams (getExec, getAttach, getPortForward, getRun):
//   /exec/{namespace}/{pod}[/{uid}]/{container} and /attach/... (GET or POST): the streams asked
//     for in the query as the kubelet reads them (input, output, error, tty: "1"; at least one, else
//     400 "you must specify at least 1 of stdin, stdout, stderr"; stderr dropped with a tty), the
//     pod (404 "pod does not exist"), then the runtime's streaming URL for the running container
//     (the view's streamingURL: CRI Exec or Attach; `container not found ("<name>")` and the
//     runtime's errors are 500, a runtime NotFound 404, ResourceExhausted 429 with Retry-After, as
//     the kubelet's streaming.WriteError), and the request is proxied there as an upgrade
//     (`proxyStream`, the kubelet's proxyStream: UpgradeAwareHandler with UpgradeRequired; its
//     errors are 500 with their text, "Upgrade request required" for a request that is none);
//   /portForward/{namespace}/{pod}[/{uid}] (GET or POST): for a WebSocket the `port` list (400 as
//     portforward.NewV4Options words it), the pod (404; a uid that is not the pod's: 404 "pod not
//     found"), the runtime's URL for the pod's sandbox (CRI PortForward), proxied the same way;
//   /run/{namespace}/{pod}[/{uid}]/{container} (POST): `cmd` split at spaces, run to its end in the
//     running container (CRI ExecSync), its stdout then stderr answered as application/json (as
//     the kubelet writes it); a failure (no such container, an exit code other than 0) is 500.
// A stream once set up (exec, attach, port forward; SPDY or WebSocket) is closed when it has carried
// nothing either way for streamingConnectionIdleTimeout (streamidle.ts).
// A view without a streaming runtime (no streamingURL or runInContainer, or no proxyStream) has
// those paths check the pod (404 "pod does not exist") and answer 501 Not Implemented.
// /logs/ serves the node's own log files (systemlogs.ts), and with enableSystemLogQuery answers
// node log queries (/logs/?query=kubelet, nodelogquery.ts), or answers 405 "logs endpoint is
// disabled." with enableSystemLogHandler off; PUT /debug/flags/v sets the log verbosity
// (enableDebugFlagsHandler); /debug/pprof/ serves Go's pprof endpoints over V8's profilers
// (enableProfilingHandler, client/profiling.ts; GET only, as the kubelet's go-restful route), or
// answers 405 "profiling endpoint is disabled." with it off.
// With the debugging handlers off (and on the read-only port) /run/, /exec/, /attach/,
// /portForward/, /containerLogs/, /runningpods/, /debug/pprof/ and /logs/ answer 405 "Debug
// endpoints are disabled.", and /configz is not there (404), as the kubelet answers.
//
// Errors are plain text, as the kubelet writes them (go-restful's WriteError: the text with no
// newline; Go's http.Error: the text and a newline; a path served by nobody: "404 page not found").
import type { IncomingMessage, ServerResponse } from 'node:http';
import client from 'prom-client';
import type { Logger } from '../client/log.js';
import { LogReadError, readLogs, type ReadLogsOptions } from './logs.js';
import { CRIError } from './cri.js';
import { cadvisorMetricsText, resourceMetricsText, summaryJSON, type ResourceSample, type StorageSummary } from './stats.js';
import { cpus, totalmem } from 'node:os';
import { serveSystemLogs } from './systemlogs.js';
import { parseNodeLogQuery, serveNodeLogQuery, validateNodeLogQuery } from './nodelogquery.js';
import { IdleStreams } from './streamidle.js';
import { serveDebugFlags, serveDebugPprof } from '../client/profiling.js';

/** the kubelet's streaming requests */
export type StreamKind = 'exec' | 'attach' | 'portForward';

/** what a streaming request asks of the runtime (the kubelet's remotecommand Options, the command, the ports) */
export interface StreamRequest {
  /** the pod's UID, when the request names it */
  uid?: string;
  /** exec: the command */
  cmd?: string[];
  stdin?: boolean;
  stdout?: boolean;
  stderr?: boolean;
  tty?: boolean;
  /** portForward: the ports a WebSocket asks for (SPDY names them per stream) */
  ports?: number[];
}

export interface NodeAgentView {
  nodeName: string;
  /** the pods bound to this node that the kubelet knows (API and static pods), as v1 Pod objects with their latest status */
  pods(): any[];
  /** the pods the runtime runs now, as kubelet's /runningpods/ shows them (minimal v1 Pods: metadata name/namespace/uid, spec.containers name+image) */
  runningPods(): Promise<any[]>;
  /** the kubelet's configuration as /configz prints it: {kubeletconfig: {...}} */
  configz(): object;
  /** the CRI log file of a container of a pod, by the pod's namespace/name (and optionally uid) and container name; previous=true: the last terminated instance. undefined when there is none (404 / 400 as kubelet answers) */
  containerLogPath(namespace: string, pod: string, container: string, previous: boolean): Promise<{ path: string; running: boolean } | { error: string; code: number }>;
  /** health checks for /healthz: name -> undefined when healthy, else the failure message (kubelet has log, ping, syncloop) */
  healthChecks(): Record<string, () => string | undefined>;
  /**
   * The container runtime's streaming URL for an exec or attach of a running container, or a port
   * forward to the pod (the kubelet's GetExec, GetAttach, GetPortForward: CRI Exec, Attach,
   * PortForward). Rejects with the kubelet's error (`container not found ("main")`); a CRIError
   * keeps the runtime's gRPC code. Absent: no streaming runtime (501).
   */
  streamingURL?(kind: StreamKind, namespace: string, pod: string, container: string, opts: StreamRequest): Promise<string>;
  /** runs a command to its end in a running container: its stdout then its stderr (the kubelet's RunInContainer: CRI ExecSync); rejects as the kubelet's does. Absent: 501 */
  runInContainer?(namespace: string, pod: string, container: string, cmd: string[], uid?: string): Promise<Buffer>;
  /**
   * the node's and its containers' CPU and memory now (stats.ts), for /metrics/resource and
   * /stats/summary; with `cadvisor`, cAdvisor's containers and machine info too, for
   * /metrics/cadvisor. Absent: 404
   */
  resourceSample?(opts?: { cadvisor?: boolean }): Promise<ResourceSample>;
  /** /metrics/probes' text (probes.ts ProbeMetrics); absent: 404 */
  probeMetrics?(): Promise<string>;
  /** the pods refused by the admit handlers so far, by kubelet_admission_rejections_total's reason label */
  admissionRejections?(): ReadonlyMap<string, number>;
  /** the node's file systems and the pods' storage, for /stats/summary (stats.ts); absent: left out */
  storageSummary?(): Promise<StorageSummary>;
  /** when the node agent started (ms since the epoch): the Summary's node startTime only when the sample has no boot time */
  startTime?: number;
}

/** a handler of a port: true when it answered, false when the path is not one it serves */
export type KubeletHandler = (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams) => Promise<boolean>;

export interface KubeletHandlerOptions {
  /** --enable-debugging-handlers (the read-only port has them off whatever this says) */
  enableDebuggingHandlers: boolean;
  /** enableSystemLogHandler: /logs/ serves the node's log directory (systemlogs.ts); default on */
  enableSystemLogHandler?: boolean;
  /** enableSystemLogQuery (with the NodeLogQuery gate): /logs/?query=... (nodelogquery.ts) */
  enableSystemLogQuery?: boolean;
  /** the journalctl command the node log query runs (default: journalctl on the PATH) */
  journalctl?: string;
  /** that directory (default /var/log) */
  systemLogDir?: string;
  /** enableDebugFlagsHandler: PUT /debug/flags/v sets the log verbosity with this (absent: 405) */
  enableDebugFlagsHandler?: boolean;
  setVerbosity?: (v: number) => void;
  /** enableProfilingHandler: /debug/pprof/ (client/profiling.ts; absent: 405 "profiling endpoint is disabled.") */
  enableProfilingHandler?: boolean;
  /** the port's write timeout, seconds: a profile this long or longer is refused, as Go's pprof refuses it (the kubelet's 4 h) */
  profilingWriteTimeoutSeconds?: number;
  /** the metrics /metrics serves (kubeletMetrics(view) when absent) */
  metrics?: KubeletMetrics;
  log?: Logger;
  /** how often a followed log looks at its file when nothing tells it the file changed (the kubelet's 1 s) */
  logPollIntervalMs?: number;
  /**
   * The kubelet's proxyStream: proxies the upgrade request to the runtime's streaming URL and pipes
   * the two connections (UpgradeAwareHandler). Rejects, before anything is written, with the error
   * the kubelet answers 500 with its text. Absent: the streaming paths answer 501.
   */
  proxyStream?: (req: IncomingMessage, res: ServerResponse, url: string) => Promise<void>;
  /**
   * streamingConnectionIdleTimeout, ms: a stream that proxyStream set up (its response upgraded,
   * 101) is closed once its client connection has carried nothing either way for this long
   * (streamidle.ts). 0 or absent: never.
   */
  streamingConnectionIdleTimeoutMs?: number;
}

// ---- plain-text answers ----

/** go-restful's WriteErrorString: the text as is (Go sniffs text/plain) */
function writeError(res: ServerResponse, code: number, text: string): void {
  if (res.headersSent) {
    // (as in Go: a status after the head is too late; the text joins the body)
    res.end(text);
    return;
  }
  res.statusCode = code;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.end(text);
}

/** Go's http.Error */
function httpError(res: ServerResponse, code: number, text: string): void {
  res.statusCode = code;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(text + '\n');
}

/** Go's http.NotFound, for a path no handler serves */
export function notFound(res: ServerResponse): void {
  httpError(res, 404, '404 page not found');
}

function writeJSON(res: ServerResponse, body: string): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  res.end(body);
}

/** a v1 PodList as the kubelet encodes one (items null when there are none: a nil slice) */
export function encodePods(pods: readonly any[]): string {
  return JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: pods.length ? pods : null }) + '\n';
}

// ---- healthz ----

export type HealthChecks = Record<string, () => string | undefined>;

/**
 * k8s.io/apiserver's healthz handlers at /healthz: "ok", or with ?verbose each check and
 * "healthz check passed"; a failed check makes it 500 with every check listed and its reason
 * withheld; ?exclude=<name> skips one; /healthz/<name> runs one check. False when the path is not
 * /healthz or one of its checks.
 */
export function serveHealthz(res: ServerResponse, path: string, query: URLSearchParams, checks: HealthChecks): boolean {
  if (path === '/healthz') {
    const excluded = new Set(query.getAll('exclude').filter((x) => x));
    let out = '';
    const failed: string[] = [];
    for (const [name, check] of Object.entries(checks)) {
      if (excluded.has(name)) {
        excluded.delete(name);
        out += `[+]${name} excluded: ok\n`;
        continue;
      }
      if (run(check) !== undefined) {
        out += `[-]${name} failed: reason withheld\n`;
        failed.push(name);
      } else out += `[+]${name} ok\n`;
    }
    if (excluded.size) out += `warn: some health checks cannot be excluded: no matches for ${[...excluded].sort().map((x) => `"${x}"`).join(',')}\n`;
    if (failed.length) {
      httpError(res, 500, `${out}healthz check failed`);
      return true;
    }
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end(query.has('verbose') ? `${out}healthz check passed\n` : 'ok');
    return true;
  }
  if (!path.startsWith('/healthz/')) return false;
  const check = Object.prototype.hasOwnProperty.call(checks, path.slice('/healthz/'.length)) ? checks[path.slice('/healthz/'.length)] : undefined;
  if (!check) return false;
  const why = run(check);
  if (why !== undefined) httpError(res, 500, `internal server error: ${why}`);
  else {
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end('ok');
  }
  return true;
}

function run(check: () => string | undefined): string | undefined {
  try {
    return check();
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/** the health port's checks: healthz.InstallHandler with none given is the ping check alone */
export const PING_ONLY: HealthChecks = { ping: () => undefined };

// ---- metrics ----

/** the kubelet's /metrics: its own gauges fed from the view, and the process's metrics; `registry` is open to more */
export class KubeletMetrics {
  readonly registry = new client.Registry();

  constructor(view: NodeAgentView) {
    client.collectDefaultMetrics({ register: this.registry });
    new client.Gauge({
      name: 'kubelet_node_name',
      help: "[ALPHA] The node's name. The count is always 1.",
      labelNames: ['node'],
      registers: [this.registry],
      collect() {
        this.reset();
        this.set({ node: view.nodeName }, 1);
      },
    });
    new client.Gauge({
      name: 'kubelet_running_pods',
      help: '[ALPHA] Number of pods that have a running pod sandbox',
      registers: [this.registry],
      async collect() {
        this.set((await view.runningPods().catch(() => [])).length);
      },
    });
    new client.Gauge({
      name: 'kubelet_running_containers',
      help: '[ALPHA] Number of containers currently running',
      labelNames: ['container_state'],
      registers: [this.registry],
      async collect() {
        // running: what the runtime runs; exited and created: the containers' last statuses
        const running = (await view.runningPods().catch(() => [])).reduce((n: number, p: any) => n + (Array.isArray(p?.spec?.containers) ? p.spec.containers.length : 0), 0);
        let exited = 0;
        let created = 0;
        for (const p of view.pods()) {
          for (const list of [p?.status?.initContainerStatuses, p?.status?.containerStatuses]) {
            for (const s of Array.isArray(list) ? list : []) {
              if (s?.state?.terminated) exited++;
              else if (s?.state?.waiting && s?.containerID) created++;
            }
          }
        }
        this.reset();
        this.set({ container_state: 'running' }, running);
        if (exited) this.set({ container_state: 'exited' }, exited);
        if (created) this.set({ container_state: 'created' }, created);
      },
    });
    if (view.admissionRejections) {
      const rejections = view.admissionRejections;
      new client.Counter({
        name: 'kubelet_admission_rejections_total',
        help: '[ALPHA] Cumulative number pod admission rejections by the Kubelet.',
        labelNames: ['reason'],
        registers: [this.registry],
        collect() {
          this.reset();
          for (const [reason, n] of rejections()) this.inc({ reason }, n);
        },
      });
    }
  }

  async serve(res: ServerResponse): Promise<void> {
    const text = await this.registry.metrics();
    res.statusCode = 200;
    res.setHeader('Content-Type', this.registry.contentType);
    res.end(text);
  }
}

// ---- the pods ----

function findPod(view: NodeAgentView, namespace: string, name: string): any | undefined {
  return view.pods().find((p) => p?.metadata?.namespace === namespace && p?.metadata?.name === name);
}

/** kubecontainer.GetContainerSpec: a container, init container or ephemeral container of the pod */
function hasContainer(pod: any, name: string): boolean {
  for (const list of [pod?.spec?.containers, pod?.spec?.initContainers, pod?.spec?.ephemeralContainers]) {
    if (Array.isArray(list) && list.some((c: any) => c?.name === name)) return true;
  }
  return false;
}

// ---- PodLogOptions from the query (the kubelet's decoding and ValidatePodLogOptions) ----

type Parsed = { ok: true; opts: ReadLogsOptions & { previous: boolean } } | { ok: false; code: number; text: string };

function queryBool(v: string | null): boolean | undefined {
  if (v === null) return undefined;
  // (the parameter codec's string-to-bool conversion: "false", "0" and "" are false, anything else true)
  const l = v.toLowerCase();
  return !(l === 'false' || l === '0' || l === '');
}

function queryInt(v: string | null): number | undefined {
  if (v === null || v === '') return undefined;
  if (!/^[+-]?\d+$/.test(v)) throw new Error('bad int');
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new Error('bad int');
  return n;
}

export function podLogOptionsFromQuery(query: URLSearchParams): Parsed {
  const q = new URLSearchParams(query);
  // backwards compatibility: `tail` stands for tailLines ("all" for none)
  const tail = q.get('tail');
  if (tail) {
    q.delete('tailLines');
    if (tail !== 'all') q.set('tailLines', tail);
  }
  const badQuery = { ok: false as const, code: 400, text: '{"message": "Unable to decode query."}' };
  let opts: ReadLogsOptions & { previous: boolean };
  try {
    opts = {
      follow: queryBool(q.get('follow')) ?? false,
      previous: queryBool(q.get('previous')) ?? false,
      timestamps: queryBool(q.get('timestamps')) ?? false,
      tailLines: queryInt(q.get('tailLines')),
      limitBytes: queryInt(q.get('limitBytes')),
      sinceSeconds: queryInt(q.get('sinceSeconds')),
    };
    const since = q.get('sinceTime');
    if (since !== null && since !== '' && since !== 'null') {
      if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(since) || Number.isNaN(Date.parse(since))) return badQuery;
      opts.sinceTime = since;
    }
    const stream = q.get('stream');
    if (stream !== null && stream !== '') opts.stream = stream;
  } catch {
    return badQuery;
  }
  const invalid = { ok: false as const, code: 422, text: '{"message": "Invalid request."}' };
  if (opts.tailLines !== undefined && opts.tailLines < 0) return invalid;
  if (opts.limitBytes !== undefined && opts.limitBytes < 1) return invalid;
  if (opts.sinceSeconds !== undefined && opts.sinceTime !== undefined) return invalid;
  if (opts.sinceSeconds !== undefined && opts.sinceSeconds < 1) return invalid;
  if (opts.stream !== undefined && !['Stdout', 'Stderr', 'All'].includes(opts.stream)) return invalid;
  if (opts.stream !== undefined && opts.stream !== 'All' && opts.tailLines !== undefined) return invalid;
  return { ok: true, opts };
}

// ---- the handler ----

function segments(path: string, prefix: string): string[] | undefined {
  if (path !== prefix && !path.startsWith(prefix + '/')) return undefined;
  return path
    .slice(prefix.length + 1)
    .split('/')
    .filter((s) => s !== '')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
}

/** the paths the debugging handlers own, which answer 405 when they are off (InstallDebuggingDisabledHandlers) */
const DEBUG_PREFIXES = ['/run/', '/exec/', '/attach/', '/portForward/', '/containerLogs/', '/runningpods/', '/debug/pprof/', '/logs/'];

function underPrefix(path: string, prefix: string): boolean {
  return path === prefix.slice(0, -1) || path.startsWith(prefix);
}

export interface KubeletHandlers {
  /** the main port's (debugging handlers as configured) */
  main: KubeletHandler;
  /** the read-only port's (debugging handlers off, no /configz) */
  readOnly: KubeletHandler;
  /** the health port's: /healthz with ping only */
  health: KubeletHandler;
  metrics: KubeletMetrics;
}

/** /logs/ with the node log query on: a query is answered by nodelogquery.ts, the rest by the file server */
async function logsWithQuery(req: IncomingMessage, res: ServerResponse, path: string, params: URLSearchParams, o: KubeletHandlerOptions): Promise<void> {
  const { query, errors } = parseNodeLogQuery(params);
  if (errors.length) return httpError(res, 400, errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`);
  if (query) {
    // (the path after /logs/ must be empty: the query says what to read)
    if (path !== '/logs/' && path !== '/logs//') return httpError(res, 406, 'path not allowed in query mode');
    const invalid = await validateNodeLogQuery(query, o.systemLogDir);
    if (invalid.length) return httpError(res, 406, invalid.length === 1 ? invalid[0]! : `[${invalid.join(', ')}]`);
    if (query.services.length) return serveNodeLogQuery(req, res, query, { root: o.systemLogDir, journalctl: o.journalctl });
    path = `/logs/${query.files[0]!.replace(/\\/g, '/').replace(/^\/+/, '')}`;
  }
  await serveSystemLogs(req, res, path, o.systemLogDir);
}

/** The kubelet's handlers over `view` (see the head of this file). */
export function kubeletHandlers(view: NodeAgentView, o: KubeletHandlerOptions): KubeletHandlers {
  const metrics = o.metrics ?? new KubeletMetrics(view);
  const idle = o.streamingConnectionIdleTimeoutMs ? new IdleStreams(o.streamingConnectionIdleTimeoutMs, o.log) : undefined;
  const defaults = async (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<boolean> => {
    if (serveHealthz(res, path, query, view.healthChecks())) return true;
    if (path === '/pods' || path === '/pods/') {
      if (req.method !== 'GET') return methodNotAllowed(res);
      writeJSON(res, encodePods(view.pods()));
      return true;
    }
    if (path === '/metrics') {
      await metrics.serve(res);
      return true;
    }
    if (path === '/metrics/probes' && view.probeMetrics) {
      if (req.method !== 'GET') return methodNotAllowed(res);
      res.statusCode = 200;
      res.setHeader('Content-Type', 'text/plain; version=0.0.4; charset=utf-8');
      res.end(await view.probeMetrics());
      return true;
    }
    if (view.resourceSample && (path === '/metrics/resource' || path === '/metrics/cadvisor' || path === '/stats/summary' || path === '/stats/summary/')) {
      if (req.method !== 'GET') return methodNotAllowed(res);
      const sample = await view.resourceSample(path === '/metrics/cadvisor' ? { cadvisor: true } : undefined);
      if (path === '/metrics/resource' || path === '/metrics/cadvisor') {
        res.setHeader('Content-Type', 'text/plain; version=0.0.4; charset=utf-8');
        res.end(path === '/metrics/resource' ? resourceMetricsText(sample) : cadvisorMetricsText(sample, { cores: cpus().length, memoryBytes: totalmem() }));
      } else {
        // (?only_cpu_and_memory=true, as metrics-server asks: CPU and memory alone, and the node's
        // start the root cgroup's (GetCPUAndMemoryStats); else the machine's boot (Get))
        const light = query.get('only_cpu_and_memory') === 'true';
        const storage = !light ? await view.storageSummary?.() : undefined;
        const nodeStart = (light ? sample.node.rootStartTime : undefined) ?? sample.node.bootTime ?? view.startTime ?? Date.now();
        writeJSON(res, JSON.stringify(summaryJSON(sample, view.nodeName, nodeStart, storage), null, 2));
      }
      return true;
    }
    return false;
  };
  const disabled = (res: ServerResponse, path: string): boolean => {
    if (!DEBUG_PREFIXES.some((p) => underPrefix(path, p))) return false;
    httpError(res, 405, 'Debug endpoints are disabled.');
    return true;
  };
  const debugging = async (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<boolean> => {
    const method = req.method ?? 'GET';
    let seg: string[] | undefined;
    if ((seg = segments(path, '/containerLogs'))) {
      if (seg.length !== 3) return routeNotFound(res);
      if (method !== 'GET') return methodNotAllowed(res);
      await containerLogs(view, res, seg[0]!, seg[1]!, seg[2]!, query, o);
      return true;
    }
    for (const [prefix, methods, shapes] of [
      ['/run', ['POST'], [3, 4]],
      ['/exec', ['GET', 'POST'], [3, 4]],
      ['/attach', ['GET', 'POST'], [3, 4]],
      ['/portForward', ['GET', 'POST'], [2, 3]],
    ] as const) {
      if (!(seg = segments(path, prefix))) continue;
      if (!(shapes as readonly number[]).includes(seg.length)) return routeNotFound(res);
      if (!(methods as readonly string[]).includes(method)) return methodNotAllowed(res);
      const streaming = prefix === '/run' ? view.runInContainer !== undefined : view.streamingURL !== undefined && o.proxyStream !== undefined;
      if (!streaming) {
        if (!findPod(view, seg[0]!, seg[1]!)) {
          writeError(res, 404, 'pod does not exist');
          return true;
        }
        httpError(res, 501, `${prefix.slice(1)} is not supported by this node agent`);
        return true;
      }
      if (prefix === '/run') await runInContainer(view, res, seg, query);
      else if (prefix === '/portForward') await portForward(view, req, res, seg, query, o.proxyStream!, idle);
      else await execOrAttach(prefix === '/exec' ? 'exec' : 'attach', view, req, res, seg, query, o.proxyStream!, idle);
      return true;
    }
    if (path === '/configz') {
      res.statusCode = 200;
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.end(JSON.stringify(view.configz()));
      return true;
    }
    if (path === '/runningpods' || path === '/runningpods/') {
      if (method !== 'GET') return methodNotAllowed(res);
      writeJSON(res, encodePods(await view.runningPods()));
      return true;
    }
    if (underPrefix(path, '/logs/')) {
      if (o.enableSystemLogHandler === false) httpError(res, 405, 'logs endpoint is disabled.');
      else if (o.enableSystemLogQuery) await logsWithQuery(req, res, path, query, o);
      else await serveSystemLogs(req, res, path, o.systemLogDir);
      return true;
    }
    if (underPrefix(path, '/debug/pprof/')) {
      if (!o.enableProfilingHandler) httpError(res, 405, 'profiling endpoint is disabled.');
      else if (method !== 'GET') return methodNotAllowed(res);
      else await serveDebugPprof(req, res, path, query, { cmdline: true, bare: 'index', writeTimeoutSeconds: o.profilingWriteTimeoutSeconds });
      return true;
    }
    if (path === '/debug/flags/v') {
      if (!o.setVerbosity || o.enableDebugFlagsHandler === false) httpError(res, 405, 'flags endpoint is disabled.');
      else await serveDebugFlags(req, res, path, o.setVerbosity);
      return true;
    }
    return false;
  };
  return {
    metrics,
    main: async (req, res, path, query) => {
      if (await defaults(req, res, path, query)) return true;
      return o.enableDebuggingHandlers ? debugging(req, res, path, query) : disabled(res, path);
    },
    readOnly: async (req, res, path, query) => (await defaults(req, res, path, query)) || disabled(res, path),
    health: async (_req, res, path, query) => serveHealthz(res, path, query, PING_ONLY),
  };
}

/** go-restful's answer for a method its route does not take */
function methodNotAllowed(res: ServerResponse): true {
  writeError(res, 405, '405: Method Not Allowed');
  return true;
}

/** go-restful's answer for a path under a web service that no route matches */
function routeNotFound(res: ServerResponse): true {
  writeError(res, 404, '404: Page Not Found');
  return true;
}

/** getContainerLogs, then GetKubeletContainerLogs' checks, then the runtime's ReadLogs */
async function containerLogs(view: NodeAgentView, res: ServerResponse, namespace: string, podName: string, container: string, query: URLSearchParams, o: KubeletHandlerOptions): Promise<void> {
  const parsed = podLogOptionsFromQuery(query);
  if (!parsed.ok) return writeError(res, parsed.code, parsed.text);
  const pod = findPod(view, namespace, podName);
  if (!pod) return writeError(res, 404, `pod ${JSON.stringify(podName)} does not exist`);
  if (!hasContainer(pod, container)) return writeError(res, 404, `container ${JSON.stringify(container)} not found in pod ${JSON.stringify(podName)}`);
  const where = await view.containerLogPath(namespace, podName, container, parsed.opts.previous);
  if ('error' in where) return writeError(res, where.code || 400, where.error);
  // the head goes out at once (the kubelet's zero-byte write through its flushing writer), then the log as it is read
  // (chunked: no length is set)
  res.statusCode = 200;
  res.flushHeaders();
  const abort = new AbortController();
  const gone = () => abort.abort();
  res.once('close', gone);
  const path = where.path;
  try {
    await readLogs(path, res as unknown as Parameters<typeof readLogs>[1], {
      ...parsed.opts,
      signal: abort.signal,
      log: o.log,
      pollIntervalMs: o.logPollIntervalMs,
      // following ends once this container instance runs no more (its log path is another, or it stopped)
      isRunning: async () => {
        if (!where.running) return false;
        const now = await view.containerLogPath(namespace, podName, container, parsed.opts.previous);
        return 'path' in now && now.path === path && now.running;
      },
    });
  } catch (e) {
    if (!(e instanceof LogReadError)) o.log?.error(e, 'Reading a container log failed', { path });
    // (the head is out: the error's text joins the body, as the kubelet's WriteError does then)
    if (!res.writableEnded && !res.destroyed) res.write(Buffer.from((e as Error).message));
  } finally {
    res.removeListener('close', gone);
  }
  if (!res.writableEnded && !res.destroyed) res.end();
}

// ---- the streams: getExec, getAttach, getPortForward, getRun ----

/** remotecommandserver.NewOptions: the streams asked for, "1" meaning yes; an error's text when none is */
export function remoteCommandOptions(query: URLSearchParams): StreamRequest | string {
  const one = (name: string) => query.get(name) === '1';
  const tty = one('tty');
  const stdin = one('input');
  const stdout = one('output');
  // (a tty has no stderr: the kubelet drops it)
  const stderr = one('error') && !tty;
  if (!stdin && !stdout && !stderr) return 'you must specify at least 1 of stdin, stdout, stderr';
  return { stdin, stdout, stderr, tty };
}

/** http.Request's WebSocket check (wsstream.IsWebSocketRequest): Upgrade websocket, and Connection naming upgrade */
function isWebSocketRequest(req: IncomingMessage): boolean {
  const upgrade = req.headers['upgrade'];
  const conn = req.headers['connection'];
  return typeof upgrade === 'string' && upgrade.toLowerCase() === 'websocket' && (Array.isArray(conn) ? conn.join(',') : conn ?? '').toLowerCase().includes('upgrade');
}

/** Go's strconv.ParseUint(s, 10, 16), as a port */
function parsePortNumber(s: string): number | string {
  if (!/^\d+$/.test(s)) return `strconv.ParseUint: parsing ${JSON.stringify(s)}: invalid syntax`;
  const n = Number(s);
  if (n > 65535) return `strconv.ParseUint: parsing ${JSON.stringify(s)}: value out of range`;
  return n;
}

/** portforward.NewV4Options: a WebSocket names its ports in the query (`port`, comma-separated lists); SPDY none */
export function portForwardPorts(req: IncomingMessage, query: URLSearchParams): number[] | string {
  if (!isWebSocketRequest(req)) return [];
  const lists = query.getAll('port');
  if (lists.length === 0) return 'query parameter "port" is required';
  const ports: number[] = [];
  for (const list of lists) {
    if (list === '') return 'query parameter "port" cannot be empty';
    for (const p of list.split(',')) {
      const n = parsePortNumber(p);
      if (typeof n === 'string') return `unable to parse ${JSON.stringify(list)} as a port: ${n}`;
      if (n < 1) return `port ${JSON.stringify(list)} must be > 0`;
      ports.push(n);
    }
  }
  return ports;
}

/** streaming.WriteError: the runtime's NotFound is 404, ResourceExhausted 429 (retry after the cache's TTL), anything else 500; the error's text */
function writeStreamingError(res: ServerResponse, e: unknown): void {
  let code = 500;
  if (e instanceof CRIError && e.codeName === 'NotFound') code = 404;
  else if (e instanceof CRIError && e.codeName === 'ResourceExhausted') {
    code = 429;
    res.setHeader('Retry-After', '60');
  }
  writeError(res, code, e instanceof Error ? e.message : String(e));
}

/**
 * the request proxied to the runtime's URL; the proxy's own errors answered as the kubelet's
 * responder does (500, http.Error). A stream set up (101) is watched for idleness when `idle` is given.
 */
async function proxyTo(req: IncomingMessage, res: ServerResponse, url: string, proxy: NonNullable<KubeletHandlerOptions['proxyStream']>, idle: IdleStreams | undefined, what: Record<string, unknown>): Promise<void> {
  try {
    await proxy(req, res, url);
  } catch (e) {
    if (res.headersSent) res.destroy();
    else httpError(res, 500, e instanceof Error ? e.message : String(e));
    return;
  }
  if (idle && res.statusCode === 101) idle.track(req.socket, what);
}

/** getExec and getAttach: /exec|attach/{namespace}/{pod}[/{uid}]/{container} */
async function execOrAttach(kind: 'exec' | 'attach', view: NodeAgentView, req: IncomingMessage, res: ServerResponse, seg: string[], query: URLSearchParams, proxy: NonNullable<KubeletHandlerOptions['proxyStream']>, idle?: IdleStreams): Promise<void> {
  const opts = remoteCommandOptions(query);
  if (typeof opts === 'string') return writeError(res, 400, opts);
  const [namespace, name] = [seg[0]!, seg[1]!];
  if (!findPod(view, namespace, name)) return writeError(res, 404, 'pod does not exist');
  const uid = seg.length === 4 ? seg[2] : undefined;
  const container = seg[seg.length - 1]!;
  let url: string;
  try {
    url = await view.streamingURL!(kind, namespace, name, container, { ...opts, ...(uid ? { uid } : {}), ...(kind === 'exec' ? { cmd: query.getAll('command') } : {}) });
  } catch (e) {
    return writeStreamingError(res, e);
  }
  await proxyTo(req, res, url, proxy, idle, { kind, pod: `${namespace}/${name}`, container });
}

/** getPortForward: /portForward/{namespace}/{pod}[/{uid}] */
async function portForward(view: NodeAgentView, req: IncomingMessage, res: ServerResponse, seg: string[], query: URLSearchParams, proxy: NonNullable<KubeletHandlerOptions['proxyStream']>, idle?: IdleStreams): Promise<void> {
  const ports = portForwardPorts(req, query);
  if (typeof ports === 'string') return writeError(res, 400, ports);
  const pod = findPod(view, seg[0]!, seg[1]!);
  if (!pod) return writeError(res, 404, 'pod does not exist');
  if (seg.length === 3 && pod.metadata?.uid !== seg[2]) return writeError(res, 404, 'pod not found');
  let url: string;
  try {
    url = await view.streamingURL!('portForward', seg[0]!, seg[1]!, '', { uid: pod.metadata?.uid, ports });
  } catch (e) {
    return writeStreamingError(res, e);
  }
  await proxyTo(req, res, url, proxy, idle, { kind: 'portForward', pod: `${seg[0]}/${seg[1]}` });
}

/** getRun: /run/{namespace}/{pod}[/{uid}]/{container}?cmd=... */
async function runInContainer(view: NodeAgentView, res: ServerResponse, seg: string[], query: URLSearchParams): Promise<void> {
  const [namespace, name] = [seg[0]!, seg[1]!];
  if (!findPod(view, namespace, name)) return writeError(res, 404, 'pod does not exist');
  // (for legacy reasons, run takes `cmd`, split at spaces)
  const cmd = (query.get('cmd') ?? '').split(' ');
  let out: Buffer;
  try {
    out = await view.runInContainer!(namespace, name, seg[seg.length - 1]!, cmd, seg.length === 4 ? seg[2] : undefined);
  } catch (e) {
    return writeError(res, 500, e instanceof Error ? e.message : String(e));
  }
  // (writeJSONResponse: no output is an empty 200)
  res.statusCode = 200;
  if (out.length) res.setHeader('Content-Type', 'application/json');
  res.end(out);
}
