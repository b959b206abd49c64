// kube-aggregator's availability metrics, on the API server's /metrics:
//   aggregator_unavailable_apiservice{name}            1 for an APIService whose Available
//                                                      condition is not True, 0 otherwise (every
//                                                      APIService, local ones included; read from
//                                                      the store when scraped, so a deleted one goes)
//   aggregator_unavailable_apiservice_total{name,reason} how often one went from available to not,
//                                                      by the condition's reason (as Kubernetes
//                                                      counts: an APIService never available is
//                                                      not counted)
import client from 'prom-client';
import type { ResourceStore } from '../registry/store.js';

export interface AggregatorMetrics {
  /** the APIService was available and no longer is, for `reason` */
  becameUnavailable(name: string, reason: string): void;
}

export function isAvailable(apiService: any): boolean {
  return (apiService?.status?.conditions ?? []).some((c: any) => c?.type === 'Available' && c?.status === 'True');
}

export function registerAggregatorMetrics(registry: client.Registry, apiServices: ResourceStore): AggregatorMetrics {
  new client.Gauge({
    name: 'aggregator_unavailable_apiservice',
    help: 'Gauge of APIServices which are marked as unavailable broken down by APIService name.',
    labelNames: ['name'],
    registers: [registry],
    collect() {
      this.reset();
      for (const e of apiServices.cacher.list({ prefix: apiServices.prefix }).items) {
        const name = e.obj?.metadata?.name;
        if (typeof name === 'string') this.set({ name }, isAvailable(e.obj) ? 0 : 1);
      }
    },
  });
  const total = new client.Counter({
    name: 'aggregator_unavailable_apiservice_total',
    help: 'Counter of APIServices which are marked as unavailable broken down by APIService name and reason.',
    labelNames: ['name', 'reason'],
    registers: [registry],
  });
  return { becameUnavailable: (name, reason) => total.inc({ name, reason: reason || 'UnknownReason' }) };
}
