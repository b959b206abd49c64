// The API aggregation layer (kube-aggregator inside kube-apiserver 1.33) for APIServices that
// name a Service (spec.service): requests for their group versions are proxied to the extension
// API server behind the Service (proxy.ts, resolve.ts); each one's Available condition is kept
// by the remote availability check (available.ts); their group versions join discovery
// (discovery.ts). The loop follows the watch caches of APIServices, Services and Endpoints and
// runs again every 30 s, as kube-aggregator's AvailableConditionController resyncs; the
// discovery documents of the extension servers are fetched again every minute and whenever their
// APIService changes.
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import { CacheFollower } from '../cachefollower.js';
import { compareVersions } from '../crd/customkind.js';
import type { ResourceStore } from '../registry/store.js';
import type { UserInfo } from '../authz.js';
import { checkAvailability, setAvailableCondition } from './available.js';
import { fetchFrom, goErrorText, httpError, proxyRequest, tlsOptionsFor, authProxyHeaders, type ProxyIdentity } from './proxy.js';
import { resolveService, ResolveError, type Location, type ServiceLookup } from './resolve.js';
import { openapiHash } from '../openapi/json.js';
import { isAvailable, type AggregatorMetrics } from './metrics.js';
import { v2ForGroupVersion, type RemoteDocument, type RemoteOpenAPI } from '../openapi/aggregated.js';
import {
  AGGREGATED_ACCEPT,
  apiGroupOf,
  entryFromAggregated,
  entryFromResourceList,
  groupRanks,
  isAggregatedType,
  mergeAggregatedGroups,
  mergeLegacyGroups,
  staleEntry,
  type RemoteVersion,
} from './discovery.js';

export { type ProxyIdentity } from './proxy.js';

/** what discovery.ts asks of the aggregator: the remote groups among the local ones */
export interface RemoteDiscovery {
  legacy(groups: any[]): any[];
  aggregated(items: any[]): any[];
}

export interface AggregatorOptions {
  apiServices: ResourceStore;
  services: ResourceStore;
  endpoints: ResourceStore;
  /** --enable-aggregator-routing */
  endpointRouting: boolean;
  /** the front-proxy client certificate (--proxy-client-cert-file, --proxy-client-key-file) */
  identity?: ProxyIdentity;
  /** this server's address, where default/kubernetes:443 leads */
  loopback: () => { host: string; port: number } | undefined;
  /** kube-aggregator's availability counter (metrics.ts) */
  metrics?: AggregatorMetrics;
  /** the remote group versions changed */
  onDiscoveryChange: (remote: RemoteDiscovery | undefined) => void;
  log: { error(err: unknown, msg: string, kv?: Record<string, unknown>): void; v(level: number): { info(msg: string, kv?: Record<string, unknown>): void } };
  /** how often every remote APIService is checked (30 s) and its discovery fetched again (60 s) */
  resyncMs?: number;
  discoveryResyncMs?: number;
}

interface DiscoveryCache {
  /** the APIService's resourceVersion when fetched */
  rv: string;
  at: number;
  entry: any;
  /** its OpenAPI documents, when its server has them; sig: their hashes */
  openapi?: RemoteDocument & { sig: string };
}

const DISCOVERY_TIMEOUT_MS = 5_000;
const OPENAPI_TIMEOUT_MS = 10_000;
/** the user of the aggregator's own requests to extension servers */
const AGGREGATOR_USER: UserInfo = { name: 'system:kube-aggregator', groups: ['system:masters'] };

export class Aggregator {
  private readonly follower: CacheFollower;
  private timer?: NodeJS.Timeout;
  private running = false;
  private again = false;
  private stopped = false;
  private readonly discoveryCache = new Map<string, DiscoveryCache>();
  private readonly agents = new Map<string, { key: string; agent: https.Agent }>();
  private remoteSig = '';

  constructor(private readonly o: AggregatorOptions) {
    this.follower = new CacheFollower([o.apiServices, o.services, o.endpoints], () => this.sync(), (e) => o.log.error(e, 'APIService availability check failed'), (e) => {
      // APIServices, and the Services and Endpoints an APIService names
      if (e.key.startsWith(o.apiServices.prefix)) return true;
      return this.remoteAPIServices().some((s) => s.spec.service.namespace === e.namespace && s.spec.service.name === e.name);
    });
  }

  /** starts the loop (its first pass runs in the background: an extension server may take 5 s to answer) */
  start(): void {
    this.follower.start();
    this.follower.schedule();
    this.timer = setInterval(() => this.follower.schedule(), this.o.resyncMs ?? 30_000);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    this.follower.stop();
    if (this.timer) clearInterval(this.timer);
    for (const { agent } of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  private remoteAPIServices(): any[] {
    const st = this.o.apiServices;
    return st.cacher
      .list({ prefix: st.prefix })
      .items.map((e) => e.obj)
      .filter((o) => o?.spec?.service);
  }

  /** the remote APIService of a group version, if there is one */
  remote(group: string, version: string): any | undefined {
    const o = this.o.apiServices.get('', `${version}.${group}`)?.obj;
    return o?.spec?.service ? o : undefined;
  }

  private lookup: ServiceLookup = {
    service: (ns, name) => this.o.services.get(ns, name)?.obj,
    endpoints: (ns, name) => this.o.endpoints.get(ns, name)?.obj,
  };

  private resolve(apiService: any): Location {
    const s = apiService.spec.service;
    return resolveService(this.lookup, s.namespace, s.name, s.port ?? 443, { endpointRouting: this.o.endpointRouting, loopback: this.o.loopback() });
  }

  /** the keep-alive agent of an APIService's transport, new when its TLS settings change */
  private agentFor(apiService: any): https.Agent {
    const name = apiService.metadata.name;
    const spec = apiService.spec;
    const key = JSON.stringify([spec.service, spec.caBundle ?? '', spec.insecureSkipTLSVerify === true]);
    const cur = this.agents.get(name);
    if (cur?.key === key) return cur.agent;
    cur?.agent.destroy();
    const agent = new https.Agent({ keepAlive: true, maxSockets: 64 });
    this.agents.set(name, { key, agent });
    return agent;
  }

  /**
   * Serve the request if it is the aggregator's: a path under /apis/<group>/<version> of a remote
   * APIService (proxied), or /apis/<group> of a group with one (its APIGroup). Undefined: not ours.
   */
  handle(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, user: UserInfo, auditID: string): Promise<void> | undefined {
    const m = /^\/apis\/([^/]+)(?:\/([^/]+))?(\/.*)?$/.exec(path);
    if (!m) return undefined;
    const group = m[1]!;
    const version = m[2];
    if (version === undefined || (version === '' && !m[3])) {
      // /apis/<group>: kube-aggregator's apiGroupHandler, from the group's APIServices
      if (req.method !== 'GET') return undefined;
      const all = this.o.apiServices.cacher.list({ prefix: this.o.apiServices.prefix }).items.map((e) => e.obj).filter((o) => (o?.spec?.group ?? '') === group);
      if (!all.some((o) => o.spec.service)) return undefined;
      const doc = { kind: 'APIGroup', apiVersion: 'v1', ...apiGroupOf(group, this.rankedVersions(all)) };
      const body = Buffer.from(JSON.stringify(doc));
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('Content-Length', body.length);
      res.end(body);
      return Promise.resolve();
    }
    const apiService = this.remote(group, version);
    if (!apiService) return undefined;
    if (!isAvailable(apiService)) {
      req.resume();
      httpError(res, 'service unavailable', 503);
      return Promise.resolve();
    }
    let location: Location;
    try {
      location = this.resolve(apiService);
    } catch (e) {
      this.o.log.error(e, 'Error resolving the Service of an APIService', { apiService: apiService.metadata.name });
      req.resume();
      httpError(res, 'service unavailable', 503);
      return Promise.resolve();
    }
    // a discovery document (/apis/<group>/<version>) gets 5 s, as NewRequestForProxy gives it
    const discoveryPath = !m[3] || m[3] === '/';
    return proxyRequest(req, res, {
      apiService,
      location,
      identity: this.o.identity,
      agent: this.agentFor(apiService),
      user,
      auditID,
      path,
      query,
      timeoutMs: discoveryPath ? DISCOVERY_TIMEOUT_MS : undefined,
    });
  }

  /** APIServices of one group as RemoteVersions, in kube-aggregator's version order */
  private rankedVersions(apiServices: any[]): RemoteVersion[] {
    return apiServices
      .map((o) => this.remoteVersion(o, undefined))
      .sort((a, b) => (a.versionPriority !== b.versionPriority ? b.versionPriority - a.versionPriority : compareVersions(a.version, b.version)));
  }

  private remoteVersion(o: any, entry: any): RemoteVersion {
    return {
      name: o.metadata.name,
      group: o.spec.group ?? '',
      version: o.spec.version,
      groupPriority: Number(o.spec.groupPriorityMinimum ?? 0),
      versionPriority: Number(o.spec.versionPriority ?? 0),
      entry,
    };
  }

  /** one pass: every remote APIService checked, its status written, discovery brought up to date */
  async sync(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      do {
        this.again = false;
        await this.syncOnce();
      } while (this.again && !this.stopped);
    } finally {
      this.running = false;
    }
  }

  private async syncOnce(): Promise<void> {
    const remote = this.remoteAPIServices();
    await Promise.all(remote.map((s) => this.checkOne(s)));
    if (this.stopped) return;
    // discovery, from the APIServices as they now stand
    const now = Date.now();
    const current = this.remoteAPIServices();
    const names = new Set(current.map((s) => s.metadata.name as string));
    for (const n of [...this.discoveryCache.keys()]) if (!names.has(n)) this.discoveryCache.delete(n);
    for (const [n, a] of [...this.agents.entries()]) {
      if (!names.has(n)) {
        a.agent.destroy();
        this.agents.delete(n);
      }
    }
    await Promise.all(
      current.map(async (s) => {
        const c = this.discoveryCache.get(s.metadata.name);
        if (c && c.rv === s.metadata.resourceVersion && now - c.at < (this.o.discoveryResyncMs ?? 60_000)) return;
        const [entry, openapi] = await Promise.all([this.fetchDiscovery(s), this.fetchOpenAPI(s)]);
        this.discoveryCache.set(s.metadata.name, { rv: s.metadata.resourceVersion, at: Date.now(), entry, openapi });
      }),
    );
    const versions = current.map((s) => this.remoteVersion(s, this.discoveryCache.get(s.metadata.name)?.entry ?? staleEntry(s.spec.version)));
    const sig = JSON.stringify(versions);
    if (sig === this.remoteSig) return;
    this.remoteSig = sig;
    if (versions.length === 0) {
      this.o.onDiscoveryChange(undefined);
      return;
    }
    const ranks = () => groupRanks(this.o.apiServices.cacher.list({ prefix: this.o.apiServices.prefix }).items.map((e) => e.obj));
    this.o.onDiscoveryChange({
      legacy: (groups) => {
        const r = ranks();
        return mergeLegacyGroups(groups, versions, (g) => (g === 'apiregistration.k8s.io' ? { priority: Infinity, name: '' } : r.get(g)));
      },
      aggregated: (items) => {
        const r = ranks();
        return mergeAggregatedGroups(items, versions, (g) => (g === 'apiregistration.k8s.io' ? { priority: Infinity, name: '' } : r.get(g)));
      },
    });
  }

  /** the availability check of one APIService, its condition written when it changed */
  private async checkOne(apiService: any): Promise<void> {
    const cond = await checkAvailability(apiService, {
      lookup: this.lookup,
      resolve: (s) => this.resolve(s),
      identity: this.o.identity,
    });
    const name = apiService.metadata.name;
    const next = setAvailableCondition(apiService, cond);
    if (!next) return;
    const wasAvailable = isAvailable(apiService);
    try {
      await this.o.apiServices.guaranteedUpdate(
        '',
        name,
        (cur) => {
          if (cur.metadata?.uid !== apiService.metadata.uid) throw Object.assign(new Error('replaced'), { code: 409 });
          return setAvailableCondition(cur, cond) ?? cur;
        },
        { dryRun: false, main: false, subresource: 'status' },
      );
      this.o.log.v(2).info('changing APIService availability', { name, newStatus: cond.status, message: cond.message, reason: cond.reason });
      if (wasAvailable && cond.status !== 'True') this.o.metrics?.becameUnavailable(name, cond.reason);
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (code !== 404 && code !== 409) throw e;
    }
  }

  /**
   * The OpenAPI documents of the available remote group versions (openapi/aggregated.ts), as last
   * fetched with their discovery: on a change of their APIService, and every minute.
   */
  readonly openapi: RemoteOpenAPI = {
    documents: () => {
      const docs: RemoteDocument[] = [];
      const sigs: string[] = [];
      for (const s of this.remoteAPIServices()) {
        if (!isAvailable(s)) continue;
        const d = this.discoveryCache.get(s.metadata.name)?.openapi;
        if (!d) continue;
        docs.push(d);
        sigs.push(d.sig);
      }
      return { docs, sig: sigs.join(' ') };
    },
  };

  /** where and how the aggregator's own requests reach an available APIService's server (undefined: they do not) */
  private reach(apiService: any): { loc: Location; tls: https.RequestOptions; agent: https.Agent } | undefined {
    if (!isAvailable(apiService)) return undefined;
    let loc: Location;
    try {
      loc = this.resolve(apiService);
    } catch {
      return undefined;
    }
    return { loc, tls: tlsOptionsFor(apiService, this.o.identity), agent: this.agentFor(apiService) };
  }

  /**
   * The OpenAPI documents an extension server has for the APIService's group version: v3 from its
   * /openapi/v3 index, v2 (its paths of the group version, and its definitions) from /openapi/v2.
   * Undefined when it has neither or cannot be reached (the kinds are then unknown to explain and
   * validation, as with kube-aggregator when the download fails).
   */
  private async fetchOpenAPI(apiService: any): Promise<(RemoteDocument & { sig: string }) | undefined> {
    const group: string = apiService.spec.group ?? '';
    const version: string = apiService.spec.version;
    const to = this.reach(apiService);
    if (!to) return undefined;
    const { loc, tls, agent } = to;
    const headers = { Accept: 'application/json', ...authProxyHeaders(AGGREGATOR_USER) };
    const name = `apis/${group}/${version}`;
    const out: RemoteDocument & { sig: string } = { name, sig: '' };
    const get = async (path: string) => {
      const r = await fetchFrom(loc, path, headers, tls, OPENAPI_TIMEOUT_MS, agent);
      return r.status === 200 && /json/i.test(String(r.headers['content-type'] ?? 'application/json')) ? r.body : undefined;
    };
    const [v3, v2] = await Promise.all([
      (async () => {
        const idx = await get('/openapi/v3');
        const url = idx ? (JSON.parse(idx.toString('utf8'))?.paths?.[name]?.serverRelativeURL as unknown) : undefined;
        if (typeof url !== 'string' || !url.startsWith('/')) return undefined;
        const body = await get(url);
        if (!body) return undefined;
        JSON.parse(body.toString('utf8')); // (a document that does not parse is not passed on)
        return { body: new Uint8Array(body), hash: openapiHash(body) };
      })().catch(() => undefined),
      (async () => {
        const body = await get('/openapi/v2');
        if (!body) return undefined;
        const part = v2ForGroupVersion(JSON.parse(body.toString('utf8')), group, version);
        return part && Object.keys(part.paths as object).length ? { part, hash: openapiHash(body) } : undefined;
      })().catch(() => undefined),
    ]);
    if (!v3 && !v2) return undefined;
    if (v3) out.v3 = v3;
    if (v2) out.v2 = v2.part;
    out.sig = `${name}:${v3?.hash ?? ''}:${v2?.hash ?? ''}`;
    return out;
  }

  /** the APIVersionDiscovery of a remote group version, from its extension server (Stale when it cannot be had) */
  private async fetchDiscovery(apiService: any): Promise<any> {
    const group: string = apiService.spec.group ?? '';
    const version: string = apiService.spec.version;
    const to = this.reach(apiService);
    if (!to) return staleEntry(version);
    const { loc, tls, agent } = to;
    try {
      const agg = await fetchFrom(loc, '/apis', { Accept: AGGREGATED_ACCEPT, ...authProxyHeaders(AGGREGATOR_USER) }, tls, DISCOVERY_TIMEOUT_MS, agent);
      if (agg.status === 503) return staleEntry(version);
      if (agg.status === 200 && isAggregatedType(agg.headers['content-type'])) {
        return entryFromAggregated(JSON.parse(agg.body.toString('utf8')), group, version) ?? { version, freshness: 'Current' };
      }
      // the legacy document of the group version
      const legacy = await fetchFrom(loc, `/apis/${group}/${version}`, { Accept: 'application/json', ...authProxyHeaders({ name: AGGREGATOR_USER.name, groups: [] }) }, tls, DISCOVERY_TIMEOUT_MS, agent);
      if (legacy.status !== 200) return staleEntry(version);
      return entryFromResourceList(JSON.parse(legacy.body.toString('utf8')), group, version);
    } catch (e) {
      this.o.log.v(2).info('Fetching the discovery of an extension API server failed', { apiService: apiService.metadata.name, err: e instanceof ResolveError ? e.message : goErrorText(e, loc) });
      return staleEntry(version);
    }
  }
}

