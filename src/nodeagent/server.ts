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
// process's metrics; a registry the agent may add to). Not served (404): /stats/, /metrics/cadvisor,
// /metrics/resource, /metrics/probes, /checkpoint/ (Keelson's node agent has no cAdvisor or
// checkpointing runtime yet).
//
// Debugging handlers: /containerLogs/{namespace}/{pod}/{container} (GET, the PodLogOptions in the
// query, as the API server sends them; the log streamed as the kubelet streams it, see logs.ts),
// /configz, /runningpods/; /exec, /attach, /portForward and /run check the pod as the kubelet does
// (404 "pod does not exist") and then answer 501 Not Implemented: Keelson's node agent has no
// streaming runtime yet. /logs/ (the node's own log files), /debug/pprof/ and /debug/flags/v answer
// 405 with the kubelet's words for those handlers when switched off ("logs endpoint is disabled."
// and the like): Keelson serves none of them.
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
}

/** a handler of a port: true when it answered, false when the path is not one it serves */
export type KubeletHandler = (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams) => Promise<boolean>;

export interface KubeletHandlerOptions {
  /** --enable-debugging-handlers (the read-only port has them off whatever this says) */
  enableDebuggingHandlers: boolean;
  /** the metrics /metrics serves (kubeletMetrics(view) when absent) */
  metrics?: KubeletMetrics;
  log?: Logger;
  /** how often a followed log looks at its file when nothing tells it the file changed (the kubelet's 1 s) */
  logPollIntervalMs?: number;
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

/** The kubelet's handlers over `view` (see the head of this file). */
export function kubeletHandlers(view: NodeAgentView, o: KubeletHandlerOptions): KubeletHandlers {
  const metrics = o.metrics ?? new KubeletMetrics(view);
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
      if (!findPod(view, seg[0]!, seg[1]!)) {
        writeError(res, 404, 'pod does not exist');
        return true;
      }
      httpError(res, 501, `${prefix.slice(1)} is not supported by this node agent`);
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
      httpError(res, 405, 'logs endpoint is disabled.');
      return true;
    }
    if (underPrefix(path, '/debug/pprof/')) {
      httpError(res, 405, 'profiling endpoint is disabled.');
      return true;
    }
    if (path === '/debug/flags/v') {
      httpError(res, 405, 'flags endpoint is disabled.');
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
