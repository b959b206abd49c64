// The admission plugins' input: a cluster held in memory maps (what the API server's caches would
// hold), and request attributes with defaults. This is not a fake API server: the plugins take a
// ClusterReader and a ClusterWriter, and these are the simplest ones.
import type { AdmissionAttributes, ClusterReader, ClusterWriter, Operation } from '../../src/apiserver/admission/types.js';
import { errors } from '../../src/machinery/errors.js';

export class MemoryCluster implements ClusterReader, ClusterWriter {
  readonly objects = new Map<string, any>();
  readonly statusWrites: { resource: string; namespace: string; name: string; status: any }[] = [];
  private rv = 100;

  private key(group: string, resource: string, namespace: string, name: string): string {
    return `${group}/${resource}/${namespace}/${name}`;
  }

  /** store an object (namespaced when it has metadata.namespace) */
  add(group: string, resource: string, obj: any): any {
    obj.metadata ??= {};
    obj.metadata.resourceVersion = String(++this.rv);
    obj.metadata.uid ??= `uid-${obj.metadata.name}-${this.rv}`;
    this.objects.set(this.key(group, resource, obj.metadata.namespace ?? '', obj.metadata.name), obj);
    return obj;
  }

  remove(group: string, resource: string, namespace: string, name: string): void {
    this.objects.delete(this.key(group, resource, namespace, name));
  }

  get(group: string, resource: string, namespace: string, name: string): any | undefined {
    return this.objects.get(this.key(group, resource, namespace, name));
  }

  list(group: string, resource: string, namespace: string): any[] {
    const prefix = namespace ? this.key(group, resource, namespace, '') : `${group}/${resource}/`;
    return [...this.objects.entries()].filter(([k]) => k.startsWith(prefix)).map(([, v]) => v);
  }

  async updateStatus(group: string, resource: string, namespace: string, name: string, mutate: (obj: any) => any): Promise<any> {
    const cur = this.get(group, resource, namespace, name);
    if (!cur) throw errors.notFound({ group, name: resource }, name);
    const next = mutate(structuredClone(cur));
    this.add(group, resource, next);
    this.statusWrites.push({ resource, namespace, name, status: structuredClone(next.status) });
    return next;
  }

  async create(group: string, resource: string, namespace: string, obj: any): Promise<any> {
    if (namespace) obj.metadata.namespace = namespace;
    if (this.get(group, resource, namespace, obj.metadata.name)) throw errors.alreadyExists({ group, name: resource }, obj.metadata.name);
    return this.add(group, resource, obj);
  }

  namespace(name: string, labels: Record<string, string> = {}, extra: any = {}): any {
    return this.add('', 'namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' }, ...extra });
  }
}

export const ADMIN = { name: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };

const KINDS: Record<string, { group: string; version: string; kind: string }> = {
  pods: { group: '', version: 'v1', kind: 'Pod' },
  namespaces: { group: '', version: 'v1', kind: 'Namespace' },
  services: { group: '', version: 'v1', kind: 'Service' },
  configmaps: { group: '', version: 'v1', kind: 'ConfigMap' },
  secrets: { group: '', version: 'v1', kind: 'Secret' },
  nodes: { group: '', version: 'v1', kind: 'Node' },
  persistentvolumeclaims: { group: '', version: 'v1', kind: 'PersistentVolumeClaim' },
  persistentvolumes: { group: '', version: 'v1', kind: 'PersistentVolume' },
  serviceaccounts: { group: '', version: 'v1', kind: 'ServiceAccount' },
  resourcequotas: { group: '', version: 'v1', kind: 'ResourceQuota' },
  limitranges: { group: '', version: 'v1', kind: 'LimitRange' },
  deployments: { group: 'apps', version: 'v1', kind: 'Deployment' },
  leases: { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' },
  priorityclasses: { group: 'scheduling.k8s.io', version: 'v1', kind: 'PriorityClass' },
  ingresses: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
  mutatingwebhookconfigurations: { group: 'admissionregistration.k8s.io', version: 'v1', kind: 'MutatingWebhookConfiguration' },
  certificatesigningrequests: { group: 'certificates.k8s.io', version: 'v1', kind: 'CertificateSigningRequest' },
};

/** the attributes of a request on `resource` (pods, namespaces, deployments...) */
export function attrs(resource: string, operation: Operation, o: Partial<AdmissionAttributes> & { object?: any } = {}): AdmissionAttributes {
  const k = KINDS[resource];
  if (!k) throw new Error(`no kind for ${resource}`);
  const obj = o.object;
  return {
    operation,
    kind: o.kind ?? k,
    resource: o.resource ?? { group: k.group, version: k.version, resource },
    subresource: o.subresource ?? '',
    namespace: o.namespace ?? obj?.metadata?.namespace ?? '',
    name: o.name ?? obj?.metadata?.name ?? '',
    object: obj,
    oldObject: o.oldObject,
    options: o.options,
    dryRun: o.dryRun ?? false,
    user: o.user ?? ADMIN,
    warnings: o.warnings ?? [],
    auditAnnotations: o.auditAnnotations ?? {},
  };
}

export function pod(name: string, namespace: string, spec: any = {}, meta: any = {}): any {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, ...meta },
    spec: { containers: [{ name: 'app', image: 'nginx', imagePullPolicy: 'Always', resources: {} }], restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', ...spec },
  };
}

/** the error a call throws or rejects with (fails when it succeeds) */
export async function rejection(fn: () => unknown): Promise<any> {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}
