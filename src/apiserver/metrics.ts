// Prometheus metrics of the API server, with kube-apiserver's metric names and labels, served at
// /metrics in the text exposition format.
//
// The per-request counters are plain numbers in maps keyed by the label values, turned into
// exposition text only when /metrics is scraped: prom-client's labelled counters cost ~14 µs per
// request on the hot path (label hashing and object spreads), these cost well under 1 µs.
// prom-client still provides the process metrics and the rest.
import client from 'prom-client';
import { goFloat } from '../machinery/gostrings.js';

const DURATION_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** apiserver_request_sli_duration_seconds: kube-apiserver's buckets (its SLOs are 1 s and 30 s) */
const SLI_BUCKETS = [0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** apiserver_response_sizes: kube-apiserver's buckets, 1 KB to 1 GB by tens */
const RESPONSE_SIZE_BUCKETS = [1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
/** apiserver_watch_events_sizes: kube-apiserver's buckets, 1 KiB to 128 KiB by twos */
const WATCH_EVENT_SIZE_BUCKETS = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072];

export interface Hist {
  labels: string;
  buckets: readonly number[];
  counts: number[];
  sum: number;
  count: number;
}

/** the histogram of `labels` in `all`, made the first time */
function histOf(all: Map<string, Hist>, labels: string, buckets: readonly number[]): Hist {
  let h = all.get(labels);
  if (!h) {
    h = { labels, buckets, counts: new Array(buckets.length).fill(0), sum: 0, count: 0 };
    all.set(labels, h);
  }
  return h;
}

export function observeIn(h: Hist, v: number): void {
  const b = h.buckets;
  for (let i = 0; i < b.length; i++) if (v <= b[i]!) h.counts[i]!++;
  h.sum += v;
  h.count++;
}

/** a histogram family in the text exposition format */
function histText(out: string[], name: string, help: string, all: Map<string, Hist>): void {
  out.push(`# HELP ${name} ${help}`);
  out.push(`# TYPE ${name} histogram`);
  for (const h of all.values()) {
    h.buckets.forEach((b, i) => out.push(`${name}_bucket{${h.labels},le="${goFloat(b)}"} ${h.counts[i]}`));
    out.push(`${name}_bucket{${h.labels},le="+Inf"} ${h.count}`);
    out.push(`${name}_sum{${h.labels}} ${h.sum}`);
    out.push(`${name}_count{${h.labels}} ${h.count}`);
  }
}

function esc(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/** the label text of one label set, built once, with its histogram and its text per code */
interface Series {
  base: string;
  hist?: Hist;
  /** the SLI histogram's labels: those of `base` without dry_run (one histogram for both) */
  sliLabels: string;
  sli?: Hist;
  byCode: Map<number, string>;
  /** a watch's series: counted, without a latency */
  watch: boolean;
  /** the response size histogram (GET and LIST only, as kube-apiserver), labelled as the SLI one */
  size?: Hist;
  sized: boolean;
}

/** the events sent to watchers of one group, version and resource: a count and their sizes */
export interface WatchEventSeries {
  count: number;
  sizes: Hist;
}

/** the label values of a request, as kube-apiserver's request metrics have them (`verb` as they report it: see metricVerb) */
export interface RequestLabels {
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  /** the component label: `apiserver` unless given (kube-apiserver's health handlers have '') */
  component?: string;
}

/** subresources served by kube-apiserver's connecters: their requests are reported as CONNECT */
const CONNECT_SUBRESOURCES = new Set(['exec', 'attach', 'portforward', 'proxy']);

/**
 * The verb kube-apiserver's request metrics report for a resource request: the verb of the route
 * that served it (POST for a create, PUT for an update, PATCH, DELETE, DELETECOLLECTION, GET,
 * LIST), WATCH for a watch, APPLY for a server-side apply patch and CONNECT for the connecter
 * subresources. (RequestInfo's verbs, create or update, are the authorizer's, not the metrics'.)
 */
export function metricVerb(info: { verb: string; subresource: string }, applyPatch: boolean): string {
  if (CONNECT_SUBRESOURCES.has(info.subresource)) return 'CONNECT';
  switch (info.verb) {
    case 'create':
      return 'POST';
    case 'update':
      return 'PUT';
    case 'patch':
      return applyPatch ? 'APPLY' : 'PATCH';
    default:
      return info.verb.toUpperCase();
  }
}

/**
 * The scope label of a resource request, as kube-apiserver's routes set it: `resource` for a route
 * naming one object and for a create, `namespace` for a collection in a namespace, `cluster` for a
 * cluster-scoped collection and for a list across all namespaces.
 */
export function metricScope(info: { verb: string; name: string; namespace: string }): string {
  if (info.name || info.verb === 'create') return 'resource';
  return info.namespace ? 'namespace' : 'cluster';
}

export class APIServerMetrics {
  readonly registry = new client.Registry();
  private readonly series = new Map<string, Series>();
  /** the series by request line (its RequestInfo) and variant (dry run 1, apply patch 2) */
  private readonly byLine = new WeakMap<object, (Series | undefined)[]>();
  private readonly requests = new Map<string, number>();
  private readonly durations = new Map<string, Hist>();
  private readonly slis = new Map<string, Hist>();
  private readonly longRunning = new Map<string, number>();
  private readonly responseSizes = new Map<string, Hist>();
  private readonly watchEvents = new Map<string, WatchEventSeries>();
  /** the highest use of each in-flight pool in the last second: [read-only, mutating] */
  private inflightMarks: [number, number] = [0, 0];
  private buildInfo = '';
  /** etcd_request_*: by `operation="...",type="..."`, a latency histogram and the failures */
  private readonly storageRequests = new Map<string, { hist: Hist; errors: number }>();
  /** apiserver_storage_size_bytes: the store's size on disk (absent for a store with no file) */
  storageSize?: () => number | undefined;
  readonly storageObjects: client.Gauge<string>;

  constructor() {
    client.collectDefaultMetrics({ register: this.registry });
    this.storageObjects = new client.Gauge({
      name: 'apiserver_storage_objects',
      help: 'Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.',
      labelNames: ['resource'],
      registers: [this.registry],
    });
  }

  /**
   * One request done: its counter and (except for watches) its latency. `line` is the request's
   * RequestInfo, which limits.ts keeps per request line: the series of a line is found again by
   * that object (no label text is built and hashed per request); `labels` gives the label values
   * the first time. One request line can be reported under more than one series: `dryRun` and
   * `applyPatch` (a PATCH with the apply content type, reported as APPLY) pick among them.
   * `sliSeconds` is the latency without the time spent calling admission webhooks, for
   * apiserver_request_sli_duration_seconds; `responseBytes`, the body sent, for
   * apiserver_response_sizes (kept for GET and LIST only, as kube-apiserver keeps it).
   */
  observe(line: object, dryRun: boolean, applyPatch: boolean, code: number, seconds: number, sliSeconds: number, labels: () => RequestLabels, responseBytes = 0): void {
    const variant = (dryRun ? 1 : 0) | (applyPatch ? 2 : 0);
    let kept = this.byLine.get(line);
    let ser = kept?.[variant];
    if (!ser) {
      ser = this.seriesOf(labels(), dryRun);
      if (!kept) this.byLine.set(line, (kept = [undefined, undefined, undefined, undefined]));
      kept[variant] = ser;
    }
    let rk = ser.byCode.get(code);
    if (rk === undefined) {
      rk = `${ser.base},code="${code}"`;
      ser.byCode.set(code, rk);
    }
    this.requests.set(rk, (this.requests.get(rk) ?? 0) + 1);
    if (ser.watch) return;
    observeIn((ser.hist ??= histOf(this.durations, ser.base, DURATION_BUCKETS)), seconds);
    observeIn((ser.sli ??= histOf(this.slis, ser.sliLabels, SLI_BUCKETS)), sliSeconds);
    if (ser.sized) observeIn((ser.size ??= histOf(this.responseSizes, ser.sliLabels, RESPONSE_SIZE_BUCKETS)), responseBytes);
  }

  /** whether a request line's responses are measured (apiserver_response_sizes): GET and LIST */
  static sizesResponses(verb: string): boolean {
    return verb === 'GET' || verb === 'LIST';
  }

  /** the series of a label set (its label texts built, and escaped, the first time it is seen) */
  private seriesOf(l: RequestLabels, dryRun: boolean): Series {
    const component = l.component ?? 'apiserver';
    const key = `${l.verb}\u0000${dryRun ? 1 : 0}\u0000${l.group}\u0000${l.version}\u0000${l.resource}\u0000${l.subresource}\u0000${l.scope}\u0000${component}`;
    let ser = this.series.get(key);
    if (!ser) {
      const rest = `group="${esc(l.group)}",version="${esc(l.version)}",resource="${esc(l.resource)}",subresource="${esc(l.subresource)}",scope="${l.scope}",component="${esc(component)}"`;
      const base = `verb="${esc(l.verb)}",dry_run="${dryRun ? 'All' : ''}",${rest}`;
      ser = { base, sliLabels: `verb="${esc(l.verb)}",${rest}`, byCode: new Map(), watch: l.verb === 'WATCH', sized: APIServerMetrics.sizesResponses(l.verb) };
      this.series.set(key, ser);
    }
    return ser;
  }

  watchStarted(l: { group: string; version: string; resource: string; subresource: string; scope: string }): () => void {
    const k = `verb="WATCH",group="${esc(l.group)}",version="${esc(l.version)}",resource="${esc(l.resource)}",subresource="${esc(l.subresource)}",scope="${l.scope}",component="apiserver"`;
    this.longRunning.set(k, (this.longRunning.get(k) ?? 0) + 1);
    return () => this.longRunning.set(k, (this.longRunning.get(k) ?? 1) - 1);
  }

  /** the series of the events sent to watchers of a group, version and kind (kept per watch; count with watchEventSent) */
  watchEventsOf(group: string, version: string, kind: string): WatchEventSeries {
    // (labelled by the watched kind, as kube-apiserver's WatchEvents are)
    const k = `group="${esc(group)}",version="${esc(version)}",kind="${esc(kind)}"`;
    let w = this.watchEvents.get(k);
    if (!w) {
      w = { count: 0, sizes: { labels: k, buckets: WATCH_EVENT_SIZE_BUCKETS, counts: new Array(WATCH_EVENT_SIZE_BUCKETS.length).fill(0), sum: 0, count: 0 } };
      this.watchEvents.set(k, w);
    }
    return w;
  }

  /** the in-flight limiter's report: the highest use of each pool in the last second */
  inflight(readOnly: number, mutating: number): void {
    this.inflightMarks = [readOnly, mutating];
  }

  /** kubernetes_build_info, from the server's /version */
  setBuildInfo(v: { major: string; minor: string; gitVersion: string; gitCommit: string; gitTreeState: string; buildDate: string; goVersion: string; compiler: string; platform: string }): void {
    this.buildInfo =
      `build_date="${esc(v.buildDate)}",compiler="${esc(v.compiler)}",git_commit="${esc(v.gitCommit)}",git_tree_state="${esc(v.gitTreeState)}",` +
      `git_version="${esc(v.gitVersion)}",go_version="${esc(v.goVersion)}",major="${esc(v.major)}",minor="${esc(v.minor)}",platform="${esc(v.platform)}"`;
  }

  /**
   * One request to storage, as kube-apiserver's etcd3 store records it: `operation` get, list,
   * listWithCount, create, update or delete; `type` the group resource ("deployments.apps").
   * `labels` is the series' label text, which the caller keeps (nothing is built per request).
   */
  storageRequest(labels: string, seconds: number, failed: boolean): void {
    let s = this.storageRequests.get(labels);
    if (!s) this.storageRequests.set(labels, (s = { hist: histOf(new Map(), labels, DURATION_BUCKETS), errors: 0 }));
    observeIn(s.hist, seconds);
    if (failed) s.errors++;
  }

  async text(): Promise<string> {
    const out: string[] = [];
    out.push('# HELP apiserver_request_total Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.');
    out.push('# TYPE apiserver_request_total counter');
    for (const [k, v] of this.requests) out.push(`apiserver_request_total{${k}} ${v}`);
    histText(out, 'apiserver_request_duration_seconds', 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.', this.durations);
    histText(
      out,
      'apiserver_request_sli_duration_seconds',
      'Response latency distribution (not counting webhook duration and priority & fairness queue wait times) in seconds for each verb, group, version, resource, subresource, scope and component.',
      this.slis,
    );
    out.push('# HELP apiserver_longrunning_requests Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.');
    out.push('# TYPE apiserver_longrunning_requests gauge');
    for (const [k, v] of this.longRunning) out.push(`apiserver_longrunning_requests{${k}} ${v}`);
    histText(out, 'apiserver_response_sizes', 'Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.', this.responseSizes);
    out.push('# HELP apiserver_current_inflight_requests Maximal number of currently used inflight request limit of this apiserver per request kind in last second.');
    out.push('# TYPE apiserver_current_inflight_requests gauge');
    out.push(`apiserver_current_inflight_requests{request_kind="mutating"} ${this.inflightMarks[1]}`);
    out.push(`apiserver_current_inflight_requests{request_kind="readOnly"} ${this.inflightMarks[0]}`);
    out.push('# HELP apiserver_watch_events_total Number of events sent in watch clients');
    out.push('# TYPE apiserver_watch_events_total counter');
    // (a series appears with its first event, as kube-apiserver's does)
    const sizes = new Map<string, Hist>();
    for (const [k, w] of this.watchEvents) {
      if (w.count === 0) continue;
      out.push(`apiserver_watch_events_total{${k}} ${w.count}`);
      sizes.set(k, w.sizes);
    }
    histText(out, 'apiserver_watch_events_sizes', 'Watch event size distribution in bytes', sizes);
    const storage = new Map<string, Hist>();
    for (const [k, r] of this.storageRequests) storage.set(k, r.hist);
    histText(out, 'etcd_request_duration_seconds', 'Etcd request latency in seconds for each operation and object type.', storage);
    out.push('# HELP etcd_requests_total Etcd request counts for each operation and object type.');
    out.push('# TYPE etcd_requests_total counter');
    for (const [k, r] of this.storageRequests) out.push(`etcd_requests_total{${k}} ${r.hist.count}`);
    out.push('# HELP etcd_request_errors_total Etcd failed request counts for each operation and object type.');
    out.push('# TYPE etcd_request_errors_total counter');
    for (const [k, r] of this.storageRequests) if (r.errors > 0) out.push(`etcd_request_errors_total{${k}} ${r.errors}`);
    const size = this.storageSize?.();
    if (size !== undefined) {
      out.push('# HELP apiserver_storage_size_bytes Size of the storage database file physically allocated in bytes.');
      out.push('# TYPE apiserver_storage_size_bytes gauge');
      out.push(`apiserver_storage_size_bytes{storage_cluster_id="etcd-0"} ${size}`);
    }
    if (this.buildInfo) {
      out.push(
        "# HELP kubernetes_build_info A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.",
      );
      out.push('# TYPE kubernetes_build_info gauge');
      out.push(`kubernetes_build_info{${this.buildInfo}} 1`);
    }
    return out.join('\n') + '\n' + (await this.registry.metrics());
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
