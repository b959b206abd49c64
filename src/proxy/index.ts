// The service proxy, started as one piece (what `keelson proxy` runs, and what `keelson server` can
// run beside its node agent): the Proxier, its health server (kube-proxy's --healthz-bind-address:
// /healthz and /livez) and its metrics server (--metrics-bind-address: /metrics, /healthz,
// /proxyMode), both plain HTTP as kube-proxy's are.
import http from 'node:http';
import client from 'prom-client';
import type { Logger } from '../client/log.js';
import { nopLogger } from '../client/log.js';
import { Proxier, type ProxierOptions } from './proxier.js';

export { cleanupTable, runNft, bridgeTrafficFiltered } from './proxier.js';
export { DEFAULT_TABLE } from './nftables.js';

export interface ProxyOptions extends ProxierOptions {
  /** host:port of /healthz and /livez; '' for none */
  healthzBindAddress?: string;
  /** host:port of /metrics; '' for none */
  metricsBindAddress?: string;
}

export interface RunningProxy {
  proxier: Proxier;
  /** the addresses actually bound (port 0 resolved) */
  healthzAddress?: string;
  metricsAddress?: string;
  /** stops the proxy; the nftables table stays, as kube-proxy leaves its rules */
  stop(): Promise<void>;
}

/** host:port, [v6]:port or :port */
export function splitHostPort(s: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d+)$/.exec(s);
  if (!m) throw new Error(`invalid address "${s}": expected host:port`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`invalid address "${s}": port out of range`);
  return { host: m[1] ?? m[2] ?? '', port };
}

function listen(addr: string, handler: http.RequestListener): Promise<{ server: http.Server; address: string }> {
  const { host, port } = splitHostPort(addr);
  const server = http.createServer(handler);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host || '0.0.0.0', () => {
      server.off('error', reject);
      const a = server.address() as { address: string; port: number };
      resolve({ server, address: `${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}` });
    });
  });
}

/** the proxy's metrics (kube-proxy's names, subsystem kubeproxy), the process's among them */
function proxyMetrics(p: Proxier): { registry: client.Registry; healthz: client.Counter<'code'>; livez: client.Counter<'code'> } {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const buckets = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);
  const duration = new client.Histogram({ name: 'kubeproxy_sync_proxy_rules_duration_seconds', help: '[ALPHA] SyncProxyRules latency in seconds', buckets, registers: [registry] });
  const fullDuration = new client.Histogram({ name: 'kubeproxy_sync_full_proxy_rules_duration_seconds', help: '[ALPHA] SyncProxyRules latency in seconds for full resyncs', buckets, registers: [registry] });
  const last = new client.Gauge({ name: 'kubeproxy_sync_proxy_rules_last_timestamp_seconds', help: '[ALPHA] The last time proxy rules were successfully synced', registers: [registry] });
  const lastQueued = new client.Gauge({ name: 'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds', help: '[ALPHA] The last time a sync of proxy rules was queued', registers: [registry] });
  const endpointChanges = new client.Counter({ name: 'kubeproxy_sync_proxy_rules_endpoint_changes_total', help: '[ALPHA] Cumulative proxy rules EndpointSlice changes', registers: [registry] });
  const serviceChanges = new client.Counter({ name: 'kubeproxy_sync_proxy_rules_service_changes_total', help: '[ALPHA] Cumulative proxy rules Service changes', registers: [registry] });
  const failures = new client.Counter({ name: 'kubeproxy_sync_proxy_rules_nftables_sync_failures_total', help: '[ALPHA] Number of nftables sync failures', registers: [registry] });
  new client.Gauge({
    name: 'kubeproxy_sync_proxy_rules_no_local_endpoints_total',
    help: '[ALPHA] Number of services with a Local traffic policy and no endpoints',
    labelNames: ['traffic_policy'],
    registers: [registry],
    collect() {
      const n = p.noLocalEndpoints();
      this.set({ traffic_policy: 'internal' }, n.internal);
      this.set({ traffic_policy: 'external' }, n.external);
    },
  });
  const healthz = new client.Counter({ name: 'kubeproxy_proxy_healthz_total', help: '[ALPHA] Cumulative proxy healthz HTTP status', labelNames: ['code'], registers: [registry] });
  const livez = new client.Counter({ name: 'kubeproxy_proxy_livez_total', help: '[ALPHA] Cumulative proxy livez HTTP status', labelNames: ['code'], registers: [registry] });
  p.observer = {
    synced(seconds, full, ok) {
      if (!ok) {
        failures.inc();
        return;
      }
      duration.observe(seconds);
      if (full) fullDuration.observe(seconds);
      last.set(Date.now() / 1000);
    },
    queued: () => lastQueued.set(Date.now() / 1000),
    serviceChange: () => serviceChanges.inc(),
    endpointChange: () => endpointChanges.inc(),
  };
  return { registry, healthz, livez };
}

/** starts the proxy: its informers, its syncs and its servers */
export async function startProxy(o: ProxyOptions): Promise<RunningProxy> {
  const log: Logger = o.log ?? nopLogger;
  const proxier = new Proxier(o);
  const { registry, healthz, livez } = proxyMetrics(proxier);
  const servers: http.Server[] = [];
  const running: RunningProxy = {
    proxier,
    async stop() {
      await proxier.stop();
      await Promise.all(servers.map((s) => new Promise((r) => {
        s.close(r);
        s.closeAllConnections();
      })));
    },
  };
  try {
    if (o.healthzBindAddress) {
      const h = await listen(o.healthzBindAddress, (req, res) => {
        const path = new URL(req.url ?? '/', 'http://proxy').pathname;
        if (path !== '/healthz' && path !== '/livez') {
          res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
          res.end('404 page not found\n');
          return;
        }
        const ok = proxier.healthy();
        const code = ok ? 200 : 503;
        (path === '/healthz' ? healthz : livez).inc({ code: String(code) });
        const body: Record<string, unknown> = { lastUpdated: new Date(proxier.lastSynced || 0).toISOString(), currentTime: new Date().toISOString() };
        // (kube-proxy's /healthz also says whether the node may take load balancer traffic: it is
        // not when the Node is being deleted; Keelson's always may)
        if (path === '/healthz') body.nodeEligible = true;
        res.writeHead(code, { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' });
        res.end(JSON.stringify(body));
      });
      servers.push(h.server);
      running.healthzAddress = h.address;
      log.info('Serving health checks', { address: h.address });
    }
    if (o.metricsBindAddress) {
      const m = await listen(o.metricsBindAddress, (req, res) => {
        const path = new URL(req.url ?? '/', 'http://proxy').pathname;
        if (path === '/metrics') {
          registry.metrics().then(
            (text) => {
              res.writeHead(200, { 'Content-Type': registry.contentType });
              res.end(text);
            },
            (e) => {
              res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
              res.end(String(e));
            },
          );
          return;
        }
        const plain = (code: number, text: string) => {
          res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
          res.end(text);
        };
        if (path === '/healthz') plain(200, 'ok');
        else if (path === '/proxyMode') plain(200, 'nftables');
        else plain(404, '404 page not found\n');
      });
      servers.push(m.server);
      running.metricsAddress = m.address;
      log.info('Serving metrics', { address: m.address });
    }
  } catch (e) {
    await running.stop();
    throw e;
  }
  proxier.start();
  log.info('Started the service proxy', { mode: 'nftables', table: proxier.table, node: o.nodeName, server: o.rest.server });
  return running;
}
