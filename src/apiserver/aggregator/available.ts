// The Available condition of a remote APIService, as kube-aggregator 1.33's remote
// AvailableConditionController decides it: the Service must exist; a ClusterIP Service must
// have the APIService's port and Endpoints with an address for that port's name; and a GET of
// the group version's discovery document (/apis/<group>/<version>, /api/v1 for v1.), as
// system:kube-aggregator in system:masters with the front-proxy client certificate and no
// verification of the serving certificate, must answer 2xx within 5 s (five tries at once, one
// success is enough).
import { rfc3339 } from '../../machinery/time.js';
import { fetchFrom, goErrorText, authProxyHeaders, type ProxyIdentity } from './proxy.js';
import type { Location, ServiceLookup } from './resolve.js';

export interface AvailableCondition {
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

export interface AvailabilityDeps {
  lookup: ServiceLookup;
  /** the address of the APIService's Service (throws when there is none) */
  resolve: (apiService: any) => Location;
  identity?: ProxyIdentity;
}

const ATTEMPTS = 5;
const TIMEOUT_MS = 5_000;

const no = (reason: string, message: string): AvailableCondition => ({ status: 'False', reason, message });

export async function checkAvailability(apiService: any, d: AvailabilityDeps): Promise<AvailableCondition> {
  const ref = apiService.spec.service;
  const port: number = ref.port ?? 443;
  const svc = d.lookup.service(ref.namespace, ref.name);
  if (!svc) return no('ServiceNotFound', `service/${ref.name} in "${ref.namespace}" is not present`);
  if ((svc.spec?.type ?? 'ClusterIP') === 'ClusterIP') {
    const sp = (svc.spec?.ports ?? []).find((p: any) => p?.port === port);
    if (!sp) return no('ServicePortError', `service/${ref.name} in "${ref.namespace}" is not listening on port ${port}`);
    const portName: string = sp.name ?? '';
    const eps = d.lookup.endpoints(ref.namespace, ref.name);
    if (!eps) return no('EndpointsNotFound', `cannot find endpoints for service/${ref.name} in "${ref.namespace}"`);
    const active = (eps.subsets ?? []).some((ss: any) => (ss?.addresses ?? []).length > 0 && (ss.ports ?? []).some((p: any) => (p?.name ?? '') === portName));
    if (!active) return no('MissingEndpoints', `endpoints for service/${ref.name} in "${ref.namespace}" have no addresses with port name "${portName}"`);
  }
  const path = apiService.metadata.name === 'v1.' ? `/api/${apiService.spec.version}` : `/apis/${apiService.spec.group}/${apiService.spec.version}`;
  const attempt = async (): Promise<string | undefined> => {
    let loc: Location;
    try {
      loc = d.resolve(apiService);
    } catch (e) {
      return (e as Error).message;
    }
    const url = `https://${loc.hostPort}${path}`;
    try {
      const r = await fetchFrom(loc, path, authProxyHeaders({ name: 'system:kube-aggregator', groups: ['system:masters'] }), { rejectUnauthorized: false, ...(d.identity ? { cert: d.identity.cert, key: d.identity.key } : {}) }, TIMEOUT_MS);
      if (r.status < 200 || r.status >= 300) return `failing or missing response from ${url}: bad status from ${url}: ${r.status}`;
      return undefined;
    } catch (e) {
      return `failing or missing response from ${url}: Get "${url}": ${goErrorText(e, loc)}`;
    }
  };
  const results = await Promise.all(Array.from({ length: ATTEMPTS }, attempt));
  if (results.some((r) => r === undefined)) return { status: 'True', reason: 'Passed', message: 'all checks passed' };
  return no('FailedDiscoveryCheck', results[results.length - 1]!);
}

/**
 * SetAPIServiceCondition on a copy: the time moves only when the status changes. Undefined when
 * the condition is already as wanted (nothing to write).
 */
export function setAvailableCondition(apiService: any, c: AvailableCondition, nowMs: number = Date.now()): any | undefined {
  const conditions: any[] = apiService.status?.conditions ?? [];
  const cur = conditions.find((x) => x?.type === 'Available');
  if (cur && cur.status === c.status && cur.reason === c.reason && cur.message === c.message) return undefined;
  const next = structuredClone(apiService);
  next.status ??= {};
  next.status.conditions ??= [];
  const at = next.status.conditions.find((x: any) => x?.type === 'Available');
  if (!at) {
    next.status.conditions.push({ type: 'Available', status: c.status, lastTransitionTime: rfc3339(nowMs), reason: c.reason, message: c.message });
    return next;
  }
  if (at.status !== c.status) {
    at.status = c.status;
    at.lastTransitionTime = rfc3339(nowMs);
  }
  at.reason = c.reason;
  at.message = c.message;
  return next;
}
