// The built-in Resource Metrics API (metrics.k8s.io/v1beta1), what k3s gets by bundling
// metrics-server, served by `keelson server` itself so that `kubectl top` works out of the box:
//
// - scraping: every resolution (15 s) each Node's kubelet is asked for /metrics/resource
//   (metrics-server 0.7's source), with the API server's kubelet client (--kubelet-client-certificate,
//   --kubelet-certificate-authority, --kubelet-preferred-address-types; the node's
//   status.daemonEndpoints port, as metrics-server's --kubelet-use-node-status-port; the
//   `metrics.k8s.io/resource-metrics-path` annotation overrides the path), each node after a small
//   random delay (8 ms per node, at most 4 s), each request bounded by 10 s (or 0.9 of the
//   resolution); the results of one round are stored together (storage.ts). No node, no request.
// - serving: NodeMetrics `nodes` and PodMetrics `pods`, get and list only (a watch is 405, as
//   metrics-server has no watch), from the stored points and the Nodes and Pods in the watch cache
//   (their labels; label selectors, and field selectors on metadata.name and metadata.namespace,
//   select among them), sorted by name (pods by namespace, then name); JSON, YAML, Protobuf
//   (proto.ts), CBOR (with the CBORServingAndStorage gate), Table and PartialObjectMetadata;
//   metrics-server's NotFound errors. List options are decoded and validated as k8s.io/apiserver's
//   list handler does for metrics-server (the same 400s as every other list's, handlers.ts);
//   limit, continue and resourceVersion, which only its storage would read, are ignored as it
//   ignores them.
// - registration: the APIService v1beta1.metrics.k8s.io (groupPriorityMinimum 100,
//   versionPriority 100, metrics-server's), without a service, so Local and Available, and the
//   ClusterRole system:aggregated-metrics-reader aggregated to view, edit and admin, as
//   metrics-server's manifest creates it. They are created when missing (the APIService again
//   when deleted). An APIService that names a service (a real metrics-server installed from its
//   manifest) takes over: the aggregator proxies to it and this one steps aside (not in
//   discovery, not serving); without the service again, it serves again.
// - disabled (`keelson server --disable=metrics-server`): the objects it made are deleted (unless
//   a real metrics-server has taken the APIService over) and nothing runs.
import https from 'node:https';
import { isIP } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors } from '../../machinery/errors.js';
import { goFormatDuration } from '../../machinery/gostrings.js';
import { matchLabels, parseFieldSelector, parseLabelSelector, SelectorParseError, type FieldTerm, type Requirement } from '../../machinery/selectors.js';
import { rfc3339 } from '../../machinery/time.js';
import { negotiateOutput, NotAcceptableError, prettyRequested, type OutputChoice } from '../../codec/negotiate.js';
import { joinHostPort } from '../../schema/printers/format.js';
import { CacheFollower } from '../cachefollower.js';
import { partialObjectMetadata, TABLE_TYPE, writeObject } from '../encode.js';
import { listOptionNumbers, methodNotAllowed, validateListQuery, watchOptions } from '../handlers.js';
import { encodeMetricsObject } from './proto.js';
import type { RequestInfo } from '../requestinfo.js';
import type { ResourceStore } from '../registry/store.js';
import { PREFERRED_ADDRESS_TYPES, DEFAULT_KUBELET_TIMEOUT_MS, type KubeletClientConfig } from '../connect.js';
import type { ExtraGroupVersion } from '../discovery.js';
import { parseQuantity } from '../../schema/validation/quantity.js';
import { decodeBatch, MetricsStorage, cpuQuantity, memoryQuantity, type MetricsBatch } from './storage.js';

export const METRICS_GROUP = 'metrics.k8s.io';
export const METRICS_VERSION = 'v1beta1';
export const METRICS_API_SERVICE = `${METRICS_VERSION}.${METRICS_GROUP}`;
export const METRICS_READER_ROLE = 'system:aggregated-metrics-reader';
/** metrics-server's default --metric-resolution in its manifest (and k3s'): 15 s; it refuses less than 10 s */
export const DEFAULT_METRIC_RESOLUTION_MS = 15_000;
export const MIN_METRIC_RESOLUTION_MS = 10_000;
/** the labels of the objects the built-in makes (so that it deletes only its own) */
const MANAGED_LABELS = { 'app.kubernetes.io/name': 'metrics-server', 'app.kubernetes.io/managed-by': 'keelson' };
/** metrics-server's --kubelet-request-timeout default */
const KUBELET_REQUEST_TIMEOUT_MS = 10_000;
const DELAY_PER_NODE_MS = 8;
const MAX_DELAY_MS = 4_000;
const DEFAULT_KUBELET_PORT = 10250;
const RESOURCE_METRICS_PATH_ANNOTATION = 'metrics.k8s.io/resource-metrics-path';
const MAX_BODY_BYTES = 64 << 20;

interface Logger {
  info(msg: string, kv?: Record<string, unknown>): void;
  error(err: unknown, msg: string, kv?: Record<string, unknown>): void;
  v(level: number): { info(msg: string, kv?: Record<string, unknown>): void; enabled: boolean };
}

export interface MetricsServerOptions {
  /** false: --disable=metrics-server (its objects are removed, nothing runs) */
  enabled: boolean;
  /** --metric-resolution in ms */
  resolutionMs: number;
  nodes: ResourceStore;
  pods: ResourceStore;
  apiServices: ResourceStore;
  clusterRoles: ResourceStore;
  /** the API server's kubelet client (--kubelet-* flags) */
  kubelet?: KubeletClientConfig;
  /** the CBORServingAndStorage gate: CBOR answers (application/cbor), as every other group's */
  cbor?: boolean;
  /** the WatchList gate (default on): a watch's options are defaulted and checked as every other's */
  watchList?: boolean;
  /** discovery: the group version while served here, nothing when not */
  setDiscovery(extra: ExtraGroupVersion[]): void;
  log: Logger;
}

const RESOURCES = [
  { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
  { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
];

/** the discovery documents of metrics.k8s.io/v1beta1, as metrics-server's generic API server serves them */
export function metricsGroupVersion(): ExtraGroupVersion {
  return {
    group: METRICS_GROUP,
    version: METRICS_VERSION,
    resources: RESOURCES.map((r) => ({ ...r, verbs: [...r.verbs] })),
    entry: {
      version: METRICS_VERSION,
      resources: RESOURCES.map((r) => ({
        resource: r.name,
        responseKind: { group: '', version: '', kind: r.kind },
        scope: r.namespaced ? 'Namespaced' : 'Cluster',
        singularResource: '',
        verbs: [...r.verbs],
      })),
      freshness: 'Current',
    },
  };
}

function apiServiceObject(): any {
  return {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: METRICS_API_SERVICE, labels: { ...MANAGED_LABELS } },
    spec: { group: METRICS_GROUP, version: METRICS_VERSION, groupPriorityMinimum: 100, versionPriority: 100 },
  };
}

function readerRoleObject(): any {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      name: METRICS_READER_ROLE,
      labels: {
        ...MANAGED_LABELS,
        'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
        'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
        'rbac.authorization.k8s.io/aggregate-to-view': 'true',
      },
    },
    rules: [{ apiGroups: [METRICS_GROUP], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] }],
  };
}

function ours(o: any): boolean {
  const l = o?.metadata?.labels ?? {};
  return Object.entries(MANAGED_LABELS).every(([k, v]) => l[k] === v);
}

function ignoreRace(e: unknown): void {
  const code = (e as { code?: unknown })?.code;
  if (code !== 404 && code !== 409) throw e;
}

function nodeReady(node: any): boolean {
  const c = (node?.status?.conditions ?? []).find((x: any) => x?.type === 'Ready');
  return c?.status === 'True';
}

const META_TYPES = 'io.k8s.apimachinery.pkg.apis.meta.v1.';

interface Selectors {
  labels: Requirement[];
  fields: FieldTerm[];
}

/** the metrics-server's answer to one kubelet request */
class ScrapeError extends Error {}

export class MetricsServer {
  private readonly storage: MetricsStorage;
  private follower?: CacheFollower;
  private timer?: NodeJS.Timeout;
  private agent?: https.Agent;
  private stopped = false;
  private scraping = false;
  /** the APIService is ours to serve (present, no service) */
  private serving = false;
  private discoverySig = '';

  constructor(private readonly o: MetricsServerOptions) {
    this.storage = new MetricsStorage(BigInt(o.resolutionMs) * 1_000_000n);
  }

  async start(): Promise<void> {
    if (!this.o.enabled) {
      await this.removeObjects();
      return;
    }
    await this.ensureObjects();
    this.follower = new CacheFollower(
      [this.o.apiServices, this.o.clusterRoles],
      () => this.ensureObjects(),
      (e) => this.o.log.error(e, 'Keeping the metrics.k8s.io APIService failed'),
      (e) => e.name === METRICS_API_SERVICE || e.name === METRICS_READER_ROLE,
    );
    this.follower.start();
    this.agent = new https.Agent({ keepAlive: true, maxSockets: 4 });
    // a scrape at once, then one every resolution (metrics-server's ticker)
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.o.resolutionMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    this.follower?.stop();
    if (this.timer) clearInterval(this.timer);
    this.agent?.destroy();
  }

  /** the APIService (created when missing) decides whether this server serves the group version */
  private async ensureObjects(): Promise<void> {
    if (this.stopped) return;
    let api = this.o.apiServices.get('', METRICS_API_SERVICE)?.obj;
    if (!api) {
      api = await this.o.apiServices.create(apiServiceObject(), { dryRun: false }).catch((e) => {
        ignoreRace(e);
        return this.o.apiServices.get('', METRICS_API_SERVICE)?.obj;
      });
      if (api) this.o.log.v(2).info('Created the APIService of the built-in Resource Metrics API', { name: METRICS_API_SERVICE });
    }
    if (!this.o.clusterRoles.get('', METRICS_READER_ROLE)) {
      await this.o.clusterRoles.create(readerRoleObject(), { dryRun: false }).catch(ignoreRace);
    }
    const serving = api != null && api.spec?.service == null;
    if (serving !== this.serving) {
      this.o.log.info(serving ? 'Serving the built-in Resource Metrics API (metrics.k8s.io/v1beta1)' : 'The APIService v1beta1.metrics.k8s.io names a service: the built-in Resource Metrics API steps aside');
    }
    this.serving = serving;
    const sig = serving ? 'on' : 'off';
    if (sig !== this.discoverySig) {
      this.discoverySig = sig;
      this.o.setDiscovery(serving ? [metricsGroupVersion()] : []);
    }
  }

  /** --disable=metrics-server: what the built-in made goes (not a real metrics-server's APIService) */
  private async removeObjects(): Promise<void> {
    this.o.setDiscovery([]);
    const api = this.o.apiServices.get('', METRICS_API_SERVICE)?.obj;
    if (api && api.spec?.service != null) return;
    if (api && ours(api)) {
      await this.o.apiServices.delete('', METRICS_API_SERVICE, { dryRun: false, preconditions: { uid: api.metadata.uid } }).catch(ignoreRace);
    }
    const role = this.o.clusterRoles.get('', METRICS_READER_ROLE)?.obj;
    if (role && ours(role)) {
      await this.o.clusterRoles.delete('', METRICS_READER_ROLE, { dryRun: false, preconditions: { uid: role.metadata.uid } }).catch(ignoreRace);
    }
  }

  // ---- scraping ----

  private async tick(): Promise<void> {
    if (this.stopped || this.scraping) return;
    const nodes = this.o.nodes.cacher.list({ prefix: this.o.nodes.prefix }).items.map((e) => e.obj);
    // (no node agent, no work: nor an empty batch twice)
    if (nodes.length === 0 && this.storage.counts().nodes === 0 && this.storage.counts().pods === 0) return;
    this.scraping = true;
    try {
      const started = Date.now();
      const delay = Math.min(DELAY_PER_NODE_MS * nodes.length, MAX_DELAY_MS);
      const batches = await Promise.all(nodes.map((n) => this.scrapeNode(n, delay)));
      if (this.stopped) return;
      const all: MetricsBatch = { nodes: new Map(), pods: new Map() };
      for (const b of batches) {
        if (!b) continue;
        for (const [k, v] of b.nodes) if (!all.nodes.has(k)) all.nodes.set(k, v);
        for (const [k, v] of b.pods) if (!all.pods.has(k)) all.pods.set(k, v);
      }
      this.storage.store(all);
      this.o.log.v(1).info('Scrape finished', { duration: `${Date.now() - started}ms`, nodeCount: all.nodes.size, podCount: all.pods.size });
    } finally {
      this.scraping = false;
    }
  }

  private async scrapeNode(node: any, maxDelayMs: number): Promise<MetricsBatch | undefined> {
    if (maxDelayMs > 0) await new Promise((r) => setTimeout(r, Math.floor(Math.random() * maxDelayMs)).unref());
    const name: string = node.metadata.name;
    try {
      const { host, port } = this.addressOf(node);
      const path = node.metadata?.annotations?.[RESOURCE_METRICS_PATH_ANNOTATION] || '/metrics/resource';
      const requestTime = Date.now();
      const text = await this.get(host, port, path);
      return decodeBatch(text, requestTime, name);
    } catch (e) {
      if (!nodeReady(node)) this.o.log.v(4).info('Failed to scrape node, node is not ready', { node: name, err: (e as Error).message });
      else this.o.log.error(e, 'Failed to scrape node', { node: name });
      return undefined;
    }
  }

  /** the node's kubelet: the first address of the preferred types, the port it reports */
  private addressOf(node: any): { host: string; port: number } {
    const addresses: any[] = Array.isArray(node.status?.addresses) ? node.status.addresses : [];
    for (const t of this.o.kubelet?.preferredAddressTypes ?? PREFERRED_ADDRESS_TYPES) {
      const a = addresses.find((x) => x?.type === t && x.address);
      if (a) {
        const p = node.status?.daemonEndpoints?.kubeletEndpoint?.Port;
        return { host: a.address, port: typeof p === 'number' && p > 0 ? p : DEFAULT_KUBELET_PORT };
      }
    }
    throw new ScrapeError(`node ${node.metadata.name} has no valid hostname and/or IP address: ${addresses.map((a) => `${a?.type ?? ''} ${a?.address ?? ''}`).join(' ')}`);
  }

  private get(host: string, port: number, path: string): Promise<string> {
    const c = this.o.kubelet;
    const verify = c?.ca !== undefined;
    const timeoutMs = Math.min(KUBELET_REQUEST_TIMEOUT_MS, Math.floor(this.o.resolutionMs * 0.9));
    const url = `https://${joinHostPort(host, String(port))}${path}`;
    return new Promise<string>((resolve, reject) => {
      const req = https.request({
        host,
        port,
        path,
        method: 'GET',
        agent: this.agent,
        cert: c?.cert,
        key: c?.key,
        ca: verify ? c!.ca : undefined,
        rejectUnauthorized: verify,
        ...(isIP(host) ? {} : { servername: host }),
        timeout: c?.timeoutMs && c.timeoutMs > 0 ? c.timeoutMs : DEFAULT_KUBELET_TIMEOUT_MS,
      });
      const deadline = setTimeout(() => req.destroy(new ScrapeError(`Get "${url}": context deadline exceeded`)), timeoutMs);
      deadline.unref();
      const done = (e?: Error, text?: string) => {
        clearTimeout(deadline);
        if (e) reject(e);
        else resolve(text!);
      };
      req.on('timeout', () => req.destroy(new ScrapeError(`Get "${url}": dial tcp ${joinHostPort(host, String(port))}: i/o timeout`)));
      req.on('error', (e) => done(e instanceof ScrapeError ? e : new ScrapeError(`Get "${url}": ${e.message}`)));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let n = 0;
        res.on('data', (d: Buffer) => {
          n += d.length;
          if (n > MAX_BODY_BYTES) {
            req.destroy(new ScrapeError('failed to read response body - too large'));
            return;
          }
          chunks.push(d);
        });
        res.on('end', () => {
          if (res.statusCode !== 200) done(new ScrapeError(`request failed, status: "${res.statusCode} ${res.statusMessage ?? ''}"`));
          else done(undefined, Buffer.concat(chunks).toString('utf8'));
        });
        res.on('error', (e) => done(new ScrapeError(`failed to read response body - ${e.message}`)));
      });
      req.end();
    });
  }

  // ---- serving ----

  /**
   * Serve a resource request of metrics.k8s.io/v1beta1 while the built-in serves it (authorized
   * already); undefined: not ours.
   */
  handle(req: IncomingMessage, res: ServerResponse, info: RequestInfo, query: URLSearchParams): Promise<void> | undefined {
    if (!this.serving || !info.isResourceRequest || info.apiGroup !== METRICS_GROUP || info.apiVersion !== METRICS_VERSION) return undefined;
    req.resume();
    const resource = RESOURCES.find((r) => r.name === info.resource);
    if (!resource || info.subresource || info.parts.length) throw errors.notFoundPath();
    if (info.namespace && !resource.namespaced) throw errors.notFoundPath();
    if (info.name && resource.namespaced && !info.namespace) throw errors.notFoundPath();
    // (no watch route: the legacy /watch/ paths are not found)
    if (info.legacyWatch) throw errors.notFoundPath();
    if (info.verb !== 'get' && info.verb !== 'list' && info.verb !== 'watch') throw methodNotAllowed();
    const list = info.verb !== 'get';
    // k8s.io/apiserver's ListResource: the answer's media type, then the ListOptions decoded
    // (their integers, then the selectors) and validated, the field selector converted, and only
    // then the watch refused (metrics-server's storage has no Watch)
    const choice = this.choice(req, query, list, resource.kind);
    let selectors: Selectors | undefined;
    if (list) {
      listOptionNumbers(query);
      selectors = this.selectors(query);
      // (checked before the watch is refused, as k8s.io/apiserver does)
      if (info.verb === 'watch') watchOptions(query, this.o.watchList !== false);
      else validateListQuery(query);
      for (const f of selectors.fields) {
        if (f.field !== 'metadata.name' && f.field !== 'metadata.namespace') {
          throw errors.badRequest(`"${f.field}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
        }
      }
      if (info.verb === 'watch') throw errors.methodNotSupported({ group: METRICS_GROUP, name: resource.name }, 'watch');
    }
    // (limit, continue and resourceVersion are left to the storage, which metrics-server's
    // ignores: every list is whole and current, without a resourceVersion)
    const nowMs = Date.now();
    if (resource.name === 'nodes') {
      if (!list) return this.write(res, choice, this.getNode(info.name, nowMs), false, query);
      const items = this.selectNodes(selectors!).flatMap((n) => this.nodeMetrics(n, nowMs) ?? []);
      return this.write(res, choice, { kind: 'NodeMetricsList', apiVersion: `${METRICS_GROUP}/${METRICS_VERSION}`, metadata: {}, items }, true, query);
    }
    if (!list) return this.write(res, choice, this.getPod(info.namespace, info.name, nowMs), false, query);
    const items = this.selectPods(info.namespace, selectors!).flatMap((p) => this.podMetrics(p, nowMs) ?? []);
    return this.write(res, choice, { kind: 'PodMetricsList', apiVersion: `${METRICS_GROUP}/${METRICS_VERSION}`, metadata: {}, items }, true, query);
  }

  private choice(req: IncomingMessage, query: URLSearchParams, list: boolean, kind: string): OutputChoice {
    try {
      return negotiateOutput(
        req.headers.accept,
        { list, table: true, metadata: true, protobuf: true, cbor: this.o.cbor === true, metadataProtobuf: true },
        prettyRequested(query.get('pretty'), req.headers['user-agent']),
      );
    } catch (e) {
      if (e instanceof NotAcceptableError) {
        const type = `*v1beta1.${kind}${list ? 'List' : ''}`;
        if (e.shape === 'PartialObjectMetadataList') throw errors.notAcceptable(`you requested PartialObjectMetadataList, but the requested object is not a list (${type})`);
        if (e.shape) throw errors.notAcceptable(`you requested PartialObjectMetadata, but the requested object is a list (${type})`);
        throw errors.notAcceptable(e.message);
      }
      throw e;
    }
  }

  private async write(res: ServerResponse, choice: OutputChoice, obj: any, list: boolean, query: URLSearchParams): Promise<void> {
    if (choice.transform === 'Table') {
      const io = query.get('includeObject') || 'Metadata';
      if (io !== 'None' && io !== 'Metadata' && io !== 'Object') {
        throw errors.badRequest(`Unable to convert to Table as requested: includeObject: Invalid value: "${io}": must be 'Metadata', 'Object', 'None', or empty`);
      }
      writeObject(res, 200, metricsTable(list ? obj.items : [obj], choice.transformVersion, io, obj.kind.replace(/List$/, '')), choice, TABLE_TYPE);
      return;
    }
    if (choice.transform === 'PartialObjectMetadataList') {
      const l = { kind: 'PartialObjectMetadataList', apiVersion: `meta.k8s.io/${choice.transformVersion}`, metadata: {}, items: obj.items.map((i: any) => partialObjectMetadata(i, choice.transformVersion)) };
      writeObject(res, 200, l, choice, `${META_TYPES}PartialObjectMetadataList`);
      return;
    }
    if (choice.transform === 'PartialObjectMetadata') {
      writeObject(res, 200, partialObjectMetadata(obj, choice.transformVersion), choice, `${META_TYPES}PartialObjectMetadata`);
      return;
    }
    if (choice.encoding === 'protobuf') {
      const body = encodeMetricsObject(obj);
      res.statusCode = 200;
      res.setHeader('Content-Type', choice.mediaType);
      res.setHeader('Cache-Control', 'no-cache, private');
      res.setHeader('Content-Length', body.length);
      res.end(body);
      return;
    }
    writeObject(res, 200, obj, choice);
  }

  /** the label and field selectors of a list, parsed (a bad one is a 400 in the parser's words) */
  private selectors(query: URLSearchParams): Selectors {
    try {
      return { labels: parseLabelSelector(query.get('labelSelector') ?? ''), fields: parseFieldSelector(query.get('fieldSelector') ?? '') };
    } catch (e) {
      if (e instanceof SelectorParseError) throw errors.badRequest(e.message);
      throw e;
    }
  }

  private selectNodes({ labels, fields }: Selectors): any[] {
    return this.o.nodes.cacher
      .list({ prefix: this.o.nodes.prefix })
      .items.map((e) => e.obj)
      .filter((n) => matchLabels(labels, n.metadata?.labels) && fieldsMatch(fields, { 'metadata.name': n.metadata.name }));
  }

  private selectPods(namespace: string, { labels, fields }: Selectors): any[] {
    const st = this.o.pods;
    return st.cacher
      .list({ prefix: namespace ? st.scopePrefix(namespace) : st.prefix })
      .items.map((e) => e.obj)
      .filter((p) => matchLabels(labels, p.metadata?.labels) && fieldsMatch(fields, { 'metadata.name': p.metadata.name, 'metadata.namespace': p.metadata.namespace }));
  }

  private getNode(name: string, nowMs: number): any {
    const node = this.o.nodes.get('', name)?.obj;
    // (metrics-server's node lister words it with the singular)
    if (!node) throw errors.notFound({ group: '', name: 'node' }, name);
    const m = this.nodeMetrics(node, nowMs);
    if (!m) throw errors.notFound({ group: METRICS_GROUP, name: 'nodemetrics' }, name);
    return { kind: 'NodeMetrics', apiVersion: `${METRICS_GROUP}/${METRICS_VERSION}`, ...m };
  }

  private getPod(namespace: string, name: string, nowMs: number): any {
    const pod = this.o.pods.get(namespace, name)?.obj;
    if (!pod) throw errors.notFound({ group: '', name: 'pods' }, name);
    const m = this.podMetrics(pod, nowMs);
    if (!m) throw errors.notFound({ group: METRICS_GROUP, name: 'podmetrics' }, `${namespace}/${name}`);
    return { kind: 'PodMetrics', apiVersion: `${METRICS_GROUP}/${METRICS_VERSION}`, ...m };
  }

  private nodeMetrics(node: any, nowMs: number): any | undefined {
    const u = this.storage.node(node.metadata.name);
    if (!u) return undefined;
    return {
      metadata: meta(node, false, nowMs),
      timestamp: timeOf(u.timestamp),
      window: goFormatDuration(u.window),
      usage: u.usage,
    };
  }

  private podMetrics(pod: any, nowMs: number): any | undefined {
    const u = this.storage.pod(pod.metadata.namespace, pod.metadata.name);
    if (!u) return undefined;
    return {
      metadata: meta(pod, true, nowMs),
      timestamp: timeOf(u.timestamp),
      window: goFormatDuration(u.window),
      containers: u.containers.map((c) => ({ name: c.name, usage: c.usage })),
    };
  }
}

/** ObjectMeta as metrics-server fills it: name, namespace, the object's labels, created now */
function meta(obj: any, namespaced: boolean, nowMs: number): any {
  const m: any = { name: obj.metadata.name };
  if (namespaced) m.namespace = obj.metadata.namespace;
  m.creationTimestamp = rfc3339(nowMs);
  const labels = obj.metadata?.labels;
  if (labels && Object.keys(labels).length) m.labels = labels;
  return m;
}

/** metav1.Time of a time in ns (whole seconds, UTC; Go's zero time when unset) */
function timeOf(ns: bigint): string {
  if (ns === 0n) return '0001-01-01T00:00:00Z';
  return rfc3339(Number(ns / 1_000_000n));
}

function fieldsMatch(terms: FieldTerm[], set: Record<string, string>): boolean {
  return terms.every((t) => ((set[t.field] ?? '') === t.value) === (t.op === '='));
}

/**
 * metrics-server's Table: Name, then a column per resource of the usage (sorted: cpu, memory),
 * then Window; a pod's usage is the sum of its containers'.
 */
function metricsTable(items: any[], version: string, includeObject: string, kind: string): any {
  let columns: any[] | null = null;
  const rows: any[] | null = items.length ? [] : null;
  for (const item of items) {
    let cpu = 0n;
    let memory = 0n;
    let names: string[];
    if (kind === 'PodMetrics') {
      names = item.containers.length ? ['cpu', 'memory'] : [];
      for (const c of item.containers) {
        cpu += parseNano(c.usage.cpu);
        memory += parseBytes(c.usage.memory);
      }
    } else {
      names = ['cpu', 'memory'];
      cpu = parseNano(item.usage.cpu);
      memory = parseBytes(item.usage.memory);
    }
    columns ??= [
      { name: 'Name', type: 'string', format: 'name', description: 'Name of the resource', priority: 0 },
      ...names.map((n) => ({ name: n, type: 'string', format: 'quantity', description: '', priority: 0 })),
      { name: 'Window', type: 'string', format: 'duration', description: '', priority: 0 },
    ];
    const cells: any[] = [item.metadata.name, ...names.map((n) => (n === 'cpu' ? cpuQuantity(cpu) : memoryQuantity(memory))), item.window];
    const row: any = { cells };
    if (includeObject === 'Object') row.object = { kind, apiVersion: `${METRICS_GROUP}/${METRICS_VERSION}`, ...item };
    else if (includeObject === 'Metadata') row.object = partialObjectMetadata(item, version);
    rows!.push(row);
  }
  return { kind: 'Table', apiVersion: `meta.k8s.io/${version}`, metadata: {}, columnDefinitions: columns, rows };
}

/** a canonical CPU quantity back in nanocores */
function parseNano(q: string): bigint {
  return parseQuantity(q)?.nano ?? 0n;
}

/** a canonical memory quantity back in bytes */
function parseBytes(q: string): bigint {
  return (parseQuantity(q)?.nano ?? 0n) / 1_000_000_000n;
}
