// Prometheus metrics of the API server, with kube-apiserver's metric names and labels, served at
// /metrics in the text exposition format.
import client from 'prom-client';

export class APIServerMetrics {
  readonly registry = new client.Registry();
  private readonly requests: client.Counter<string>;
  private readonly duration: client.Histogram<string>;
  private readonly longRunning: client.Gauge<string>;
  private readonly inFlight: client.Gauge<string>;
  readonly storageObjects: client.Gauge<string>;

  constructor() {
    client.collectDefaultMetrics({ register: this.registry });
    this.requests = new client.Counter({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      labelNames: ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'],
      registers: [this.registry],
    });
    this.duration = new client.Histogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      labelNames: ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
      buckets: [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
      registers: [this.registry],
    });
    this.longRunning = new client.Gauge({
      name: 'apiserver_longrunning_requests',
      help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component.',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
      registers: [this.registry],
    });
    this.inFlight = new client.Gauge({
      name: 'apiserver_current_inflight_requests',
      help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
      labelNames: ['request_kind'],
      registers: [this.registry],
    });
    this.storageObjects = new client.Gauge({
      name: 'apiserver_storage_objects',
      help: 'Number of stored objects at the time of last check split by kind.',
      labelNames: ['resource'],
      registers: [this.registry],
    });
  }

  observe(l: { verb: string; dryRun: boolean; group: string; version: string; resource: string; subresource: string; scope: string; code: number }, seconds: number): void {
    const verb = l.verb.toUpperCase();
    const labels = { verb, dry_run: l.dryRun ? 'All' : '', group: l.group, version: l.version, resource: l.resource, subresource: l.subresource, scope: l.scope, component: 'apiserver' };
    this.requests.inc({ ...labels, code: String(l.code) });
    if (l.verb !== 'watch') this.duration.observe(labels, seconds);
  }

  watchStarted(l: { group: string; version: string; resource: string; subresource: string; scope: string }): () => void {
    const labels = { verb: 'WATCH', component: 'apiserver', ...l };
    this.longRunning.inc(labels);
    return () => this.longRunning.dec(labels);
  }

  setInFlight(mutating: number, readOnly: number): void {
    this.inFlight.set({ request_kind: 'mutating' }, mutating);
    this.inFlight.set({ request_kind: 'readOnly' }, readOnly);
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
