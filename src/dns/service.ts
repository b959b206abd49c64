// The kube-dns Service of a Keelson cluster. k3s runs CoreDNS as pods behind kube-system/kube-dns
// (ClusterIP: the 10th address of the service range; ports 53/UDP dns, 53/TCP dns-tcp, 9153/TCP
// metrics; label k8s-app=kube-dns) and points every kubelet's clusterDNS at that address. Keelson's
// DNS runs in the server process on the host instead, so the Service has no selector: its one
// EndpointSlice, kept here, names the node's address and the port the DNS listens on (the Service's
// port 53 maps to it), and the service proxy carries pods' queries for the ClusterIP there.
// The DNS's own API user gets k3s' system:coredns ClusterRole (list and watch of Services,
// Endpoints, EndpointSlices, Pods and Namespaces).
import { isIP } from 'node:net';
import { isAlreadyExists, isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient, type KubeObject } from '../client/resources.js';
import { SERVICE_NAME_LABEL } from './records.js';

export const DNS_SERVICE_NAMESPACE = 'kube-system';
export const DNS_SERVICE_NAME = 'kube-dns';
/** the EndpointSlice kept for the Service */
export const DNS_SLICE_NAME = 'kube-dns-keelson';
export const DNS_MANAGED_BY = 'keelson-dns';
/** the user the cluster DNS reaches the API as (bound to the system:coredns ClusterRole) */
export const CLUSTER_DNS_USER = 'system:coredns';

export interface DNSServiceOptions {
  /** the Service's ClusterIP (k3s: the 10th address of --service-cluster-ip-range, 10.96.0.10 for Keelson's default) */
  clusterIP: string;
  /** the address pods reach the DNS at (the node's; not a loopback address, which EndpointSlices refuse) */
  nodeIP: string;
  /** the port the DNS listens on (UDP and TCP) */
  port: number;
  /** the port of the metrics (9153 in the Service); none: the Service has no metrics port */
  metricsPort?: number;
  /** the node the endpoint is on (EndpointSlice endpoint nodeName) */
  nodeName?: string;
}

/** the n-th address of a CIDR (`10.96.0.0/12`, 10 -> 10.96.0.10); IPv4 and IPv6 */
export function nthAddress(cidr: string, n: number): string {
  const [base, bits] = cidr.split('/') as [string, string | undefined];
  const fam = isIP(base);
  if (!fam || bits === undefined) throw new Error(`invalid CIDR ${JSON.stringify(cidr)}`);
  if (fam === 4) {
    const v = base.split('.').reduce((a, o) => (a << 8n) | BigInt(Number(o)), 0n);
    const mask = ((1n << 32n) - 1n) ^ ((1n << BigInt(32 - Number(bits))) - 1n);
    const x = (v & mask) + BigInt(n);
    return [24n, 16n, 8n, 0n].map((s) => String((x >> s) & 255n)).join('.');
  }
  const [h, t] = base.includes('::') ? (base.split('::') as [string, string]) : [base, ''];
  const hs = h ? h.split(':') : [];
  const ts = t ? t.split(':') : [];
  const groups = [...hs, ...new Array(8 - hs.length - ts.length).fill('0'), ...ts];
  const v = groups.reduce((a, g) => (a << 16n) | BigInt(parseInt(g, 16)), 0n);
  const mask = ((1n << 128n) - 1n) ^ ((1n << BigInt(128 - Number(bits))) - 1n);
  const x = (v & mask) + BigInt(n);
  const out: string[] = [];
  for (let i = 7; i >= 0; i--) out.push(((x >> BigInt(i * 16)) & 0xffffn).toString(16));
  // RFC 5952: the longest run of two or more zero groups as ::
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && out[j] === '0') j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j > i ? j : i + 1;
  }
  return best < 0 ? out.join(':') : `${out.slice(0, best).join(':')}::${out.slice(best + bestLen).join(':')}`;
}

function serviceBody(o: DNSServiceOptions): any {
  const ports: any[] = [
    { name: 'dns', port: 53, protocol: 'UDP', targetPort: o.port },
    { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: o.port },
  ];
  if (o.metricsPort) ports.push({ name: 'metrics', port: 9153, protocol: 'TCP', targetPort: o.metricsPort });
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: DNS_SERVICE_NAME,
      namespace: DNS_SERVICE_NAMESPACE,
      labels: { 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' },
      annotations: o.metricsPort ? { 'prometheus.io/port': '9153', 'prometheus.io/scrape': 'true' } : {},
    },
    spec: { type: 'ClusterIP', clusterIP: o.clusterIP, clusterIPs: [o.clusterIP], ports },
  };
}

function sliceBody(o: DNSServiceOptions): any {
  const ports: any[] = [
    { name: 'dns', port: o.port, protocol: 'UDP' },
    { name: 'dns-tcp', port: o.port, protocol: 'TCP' },
  ];
  if (o.metricsPort) ports.push({ name: 'metrics', port: o.metricsPort, protocol: 'TCP' });
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: DNS_SLICE_NAME,
      namespace: DNS_SERVICE_NAMESPACE,
      labels: { [SERVICE_NAME_LABEL]: DNS_SERVICE_NAME, 'endpointslice.kubernetes.io/managed-by': DNS_MANAGED_BY, 'k8s-app': 'kube-dns' },
    },
    addressType: isIP(o.nodeIP) === 6 ? 'IPv6' : 'IPv4',
    endpoints: [{ addresses: [o.nodeIP], conditions: { ready: true, serving: true, terminating: false }, ...(o.nodeName ? { nodeName: o.nodeName } : {}) }],
    ports,
  };
}

/** JSON with object keys sorted (the server's key order is its own) */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as any)[k])}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

const sameJSON = (a: unknown, b: unknown) => canonical(a) === canonical(b);

function portsKey(ports: any[] | undefined): string {
  return JSON.stringify((ports ?? []).map((p) => [p.name, p.port, p.protocol ?? 'TCP', p.targetPort]));
}

/**
 * Makes kube-system/kube-dns and its EndpointSlice what the options say (creates, updates; a Service
 * with another ClusterIP, which cannot change, is deleted and made again). Returns what it did.
 */
export async function ensureDNSService(client: RESTClient, o: DNSServiceOptions): Promise<{ service: 'created' | 'updated' | 'replaced' | 'unchanged'; slice: 'created' | 'updated' | 'unchanged' }> {
  if (!isIP(o.clusterIP)) throw new Error(`ensureDNSService: invalid clusterIP ${JSON.stringify(o.clusterIP)}`);
  if (!isIP(o.nodeIP)) throw new Error(`ensureDNSService: invalid nodeIP ${JSON.stringify(o.nodeIP)}`);
  // (EndpointSlice validation refuses loopback addresses, as Kubernetes': the DNS must listen on an address pods reach)
  if (/^127\./.test(o.nodeIP) || o.nodeIP === '::1') throw new Error(`ensureDNSService: nodeIP ${o.nodeIP} is a loopback address, which an EndpointSlice may not hold`);
  const { services, slices } = clients(client);
  const want = serviceBody(o);
  let service: 'created' | 'updated' | 'replaced' | 'unchanged' = 'unchanged';
  const have = await getIfExists(services, DNS_SERVICE_NAME);
  if (!have) {
    await createIgnoringRace(services, want);
    service = 'created';
  } else if (have.spec?.clusterIP !== o.clusterIP || have.spec?.type !== 'ClusterIP') {
    await recreate(services, want);
    service = 'replaced';
  } else {
    const labels = { ...(have.metadata?.labels ?? {}), ...want.metadata.labels };
    const annotations = { ...(have.metadata?.annotations ?? {}), ...want.metadata.annotations };
    if (have.spec?.selector || portsKey(have.spec?.ports) !== portsKey(want.spec.ports) || !sameJSON(labels, have.metadata?.labels ?? {}) || !sameJSON(annotations, have.metadata?.annotations ?? {})) {
      const { selector: _drop, ...spec } = have.spec;
      await services.update({ ...have, metadata: { ...have.metadata, labels, annotations }, spec: { ...spec, ports: want.spec.ports } });
      service = 'updated';
    }
  }
  const wantSlice = sliceBody(o);
  let slice: 'created' | 'updated' | 'unchanged' = 'unchanged';
  const haveSlice = await getIfExists(slices, DNS_SLICE_NAME);
  if (!haveSlice) {
    await createIgnoringRace(slices, wantSlice);
    slice = 'created';
  } else if (haveSlice.addressType !== wantSlice.addressType) {
    // (addressType cannot change)
    await recreate(slices, wantSlice);
    slice = 'updated';
  } else if (!sameJSON(haveSlice.endpoints, wantSlice.endpoints) || !sameJSON(haveSlice.ports, wantSlice.ports) || !sameJSON({ ...haveSlice.metadata?.labels, ...wantSlice.metadata.labels }, haveSlice.metadata?.labels ?? {})) {
    await slices.update({ ...haveSlice, metadata: { ...haveSlice.metadata, labels: { ...haveSlice.metadata?.labels, ...wantSlice.metadata.labels } }, endpoints: wantSlice.endpoints, ports: wantSlice.ports });
    slice = 'updated';
  }
  return { service, slice };
}

/** Deletes the kube-dns Service and its EndpointSlice (`--disable=coredns`: what the DNS made goes, as k3s does). */
export async function removeDNSService(client: RESTClient): Promise<void> {
  const { services, slices } = clients(client);
  await deleteIfExists(slices, DNS_SLICE_NAME);
  await deleteIfExists(services, DNS_SERVICE_NAME);
}

function clients(client: RESTClient): { services: ResourceClient<KubeObject>; slices: ResourceClient<KubeObject> } {
  return {
    services: new ResourceClient<KubeObject>(client, { group: '', version: 'v1', resource: 'services' }, DNS_SERVICE_NAMESPACE),
    slices: new ResourceClient<KubeObject>(client, { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' }, DNS_SERVICE_NAMESPACE),
  };
}

async function getIfExists(c: ResourceClient<KubeObject>, name: string): Promise<any> {
  try {
    return await c.get(name);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    return undefined;
  }
}

async function deleteIfExists(c: ResourceClient<KubeObject>, name: string): Promise<void> {
  try {
    await c.delete(name);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

/** delete and create again (a field that cannot change does) */
async function recreate(c: ResourceClient<KubeObject>, body: any): Promise<void> {
  await deleteIfExists(c, body.metadata.name);
  await c.create(body);
}

async function createIgnoringRace(c: ResourceClient<KubeObject>, body: any): Promise<void> {
  try {
    await c.create(body);
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
  }
}

/** k3s' system:coredns ClusterRole, bound to the DNS's user (and to kube-system's coredns service account, as in k3s) */
export async function ensureDNSRBAC(client: RESTClient, user = CLUSTER_DNS_USER): Promise<void> {
  const roles = new ResourceClient<KubeObject>(client, { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' });
  const bindings = new ResourceClient<KubeObject>(client, { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings' });
  const labels = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'system:coredns', labels },
    rules: [
      { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
    ],
  };
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'system:coredns', labels, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
    subjects: [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user },
      { kind: 'ServiceAccount', name: 'coredns', namespace: 'kube-system' },
    ],
  };
  await upsert(roles, role, (have) => sameJSON(have.rules, role.rules));
  await upsert(bindings, binding, (have) => sameJSON(have.roleRef, binding.roleRef) && sameJSON(have.subjects, binding.subjects));
}

async function upsert(c: ResourceClient<KubeObject>, body: any, same: (have: any) => boolean): Promise<void> {
  const have = await getIfExists(c, body.metadata.name);
  if (!have) return createIgnoringRace(c, body);
  if (same(have)) return;
  // (roleRef cannot change)
  if (body.kind === 'ClusterRoleBinding' && !sameJSON(have.roleRef, body.roleRef)) return recreate(c, body);
  await c.update({ ...have, ...body, metadata: { ...have.metadata, labels: { ...have.metadata?.labels, ...body.metadata.labels } } });
}
