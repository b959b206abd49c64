// What the API server needs to put the chain in its write path: a ClusterReader and a
// ClusterWriter over its stores, the attributes of a request, and the flags' declarations.
import type { UserInfo } from '../authz.js';
import type { KindDecl } from '../../schema/model.js';
import type { ResourceStore } from '../registry/store.js';
import type { AdmissionAttributes, ClusterReader, ClusterWriter, Operation } from './types.js';
import { admissionFlagHelp } from './chain.js';

/** by group, then resource: found without building a key (admission reads on every write) */
function index(stores: Iterable<ResourceStore>): Map<string, Map<string, ResourceStore>> {
  const m = new Map<string, Map<string, ResourceStore>>();
  for (const s of stores) {
    let g = m.get(s.kind.group);
    if (!g) m.set(s.kind.group, (g = new Map()));
    g.set(s.kind.resource, s);
  }
  return m;
}

/** what a list of a resource without objects gives (shared: callers only read lists) */
const NOTHING: readonly any[] = Object.freeze([]);

/** reads of the stores' watch caches; unknown resources read as empty */
export function storeReader(stores: Iterable<ResourceStore>): ClusterReader {
  const byResource = index(stores);
  return {
    get(group, resource, namespace, name) {
      const s = byResource.get(group)?.get(resource);
      return s?.get(s.kind.namespaced ? namespace : '', name)?.obj;
    },
    list(group, resource, namespace) {
      const s = byResource.get(group)?.get(resource);
      // most admission lookups (webhook configurations, policies, quotas, limit ranges) find none
      if (!s || s.cacher.isEmpty()) return NOTHING as any[];
      return s.cacher.list({ prefix: s.scopePrefix(namespace) }).items.map((e) => e.obj);
    },
  };
}

/** writes straight to the stores (status through the status subresource's path) */
export function storeWriter(stores: Iterable<ResourceStore>): ClusterWriter {
  const byResource = index(stores);
  const store = (group: string, resource: string) => {
    const s = byResource.get(group)?.get(resource);
    if (!s) throw new Error(`no store for ${resource}${group ? '.' + group : ''}`);
    return s;
  };
  return {
    updateStatus(group, resource, namespace, name, mutate) {
      return store(group, resource).guaranteedUpdate(namespace, name, mutate, { dryRun: false, main: false, subresource: 'status' });
    },
    create(group, resource, namespace, obj) {
      const s = store(group, resource);
      if (s.kind.namespaced) obj.metadata = { ...(obj.metadata ?? {}), namespace };
      return s.create(obj, { dryRun: false });
    },
  };
}

export interface RequestAdmission {
  operation: Operation;
  /** the namespace of the URL ('' for cluster-scoped resources) */
  namespace: string;
  /** the name of the URL; '' for a create (the object's name is taken, '' with generateName) */
  name: string;
  subresource?: string;
  object?: any;
  oldObject?: any;
  /** CreateOptions, UpdateOptions, PatchOptions or DeleteOptions as the request gave them */
  options?: any;
  dryRun: boolean;
  user: UserInfo;
  /** the request's Warning list (Request.warnings): plugins append to it */
  warnings?: string[];
  /** the request's audit annotations (absent when the request is not audited): plugins add to them */
  auditAnnotations?: Record<string, string>;
  /** where webhook plugins count their time (the request's scope) */
  latency?: { webhookMs: number };
}

/**
 * The attributes of a request on a kind. The kind of a subresource is the subresource's own
 * (autoscaling/v1 Scale for scale, policy/v1 Eviction for eviction); a Namespace's requests carry
 * the namespace's name as their namespace, as Kubernetes' request info does.
 */
export function admissionAttributes(kind: KindDecl, r: RequestAdmission): AdmissionAttributes {
  return admissionAttributesOf(kind, r, r.operation, r.object, r.oldObject, r.options, r.dryRun);
}

/**
 * admissionAttributes of a request's facts and what the store adds to them. The store's write
 * path calls this rather than spreading the request into a new object: V8 makes an object spread
 * followed by new properties (`{ ...request, operation, object, ... }`) in its slow path, some
 * 5 µs per write.
 */
export function admissionAttributesOf(
  kind: KindDecl,
  r: Omit<RequestAdmission, 'operation' | 'object' | 'oldObject' | 'options' | 'dryRun'>,
  operation: Operation,
  object: any,
  oldObject: any,
  options: any,
  dryRun: boolean,
): AdmissionAttributes {
  const sub = r.subresource ?? '';
  const subDecl = sub ? kind.subresources.find((s) => s.name === sub) : undefined;
  const k = subDecl && subDecl.kind ? { group: subDecl.group, version: subDecl.version, kind: subDecl.kind } : { group: kind.group, version: kind.version, kind: kind.kind };
  const name = r.name || (operation === 'CREATE' && sub === '' ? (object?.metadata?.name ?? '') : '');
  let namespace = r.namespace;
  if (kind.group === '' && kind.kind === 'Namespace') namespace = name;
  return {
    operation,
    kind: k,
    resource: { group: kind.group, version: kind.version, resource: kind.resource },
    subresource: sub,
    namespace,
    name,
    object,
    oldObject,
    options,
    dryRun,
    user: r.user,
    warnings: r.warnings ?? [],
    auditAnnotations: r.auditAnnotations ?? {},
    latency: r.latency,
  };
}

export interface FlagDecl {
  name: string;
  type: 'strings' | 'int';
  default: string[] | number;
  help: string;
}

/** kube-apiserver's admission flags, as the cli should declare them (section "admission") */
export function admissionFlags(): FlagDecl[] {
  const h = admissionFlagHelp();
  return [
    { name: 'enable-admission-plugins', type: 'strings', default: [], help: h.enable },
    { name: 'disable-admission-plugins', type: 'strings', default: [], help: h.disable },
    {
      name: 'default-not-ready-toleration-seconds',
      type: 'int',
      default: 300,
      help: 'Indicates the tolerationSeconds of the toleration for notReady:NoExecute that is added by default to every pod that does not already have such a toleration.',
    },
    {
      name: 'default-unreachable-toleration-seconds',
      type: 'int',
      default: 300,
      help: 'Indicates the tolerationSeconds of the toleration for unreachable:NoExecute that is added by default to every pod that does not already have such a toleration.',
    },
  ];
}
