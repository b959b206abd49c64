// The namespace plugins: NamespaceLifecycle (no new content in a namespace that is missing or
// being terminated; the immortal namespaces cannot be deleted), NamespaceExists (no content in a
// missing namespace) and NamespaceAutoProvision (a missing namespace is created on first use).
import { errors, StatusError } from '../../machinery/errors.js';
import type { AdmissionAttributes, AdmissionPlugin, ClusterReader, ClusterWriter } from './types.js';
import { forbidden } from './util.js';

/** Kubernetes' immortal namespaces (metav1.NamespaceDefault, NamespaceSystem, NamespacePublic) */
export const IMMORTAL_NAMESPACES = ['default', 'kube-system', 'kube-public'];

/** how long a create in a namespace the cache does not show waits for it before a second look */
const MISSING_NAMESPACE_WAIT_MS = 50;

const NAMESPACES = { group: '', name: 'namespaces' };

function isNamespaceKind(a: AdmissionAttributes): boolean {
  return a.kind.group === '' && a.kind.kind === 'Namespace';
}

/** access reviews tell nothing about a namespace's existence (they would leak it) */
function isAccessReview(a: AdmissionAttributes): boolean {
  return a.resource.group === 'authorization.k8s.io' && a.resource.resource === 'localsubjectaccessreviews';
}

function terminating(ns: any): boolean {
  return ns?.status?.phase === 'Terminating' || !!ns?.metadata?.deletionTimestamp;
}

async function lookupNamespace(reader: ClusterReader, name: string, wait: boolean): Promise<any | undefined> {
  let ns = reader.get('', 'namespaces', '', name);
  if (!ns && wait) {
    // give the cache time to observe a namespace created just before
    await new Promise((r) => setTimeout(r, MISSING_NAMESPACE_WAIT_MS));
    ns = reader.get('', 'namespaces', '', name);
  }
  return ns;
}

export function namespaceLifecycle(reader: ClusterReader, immortal: string[] = IMMORTAL_NAMESPACES): AdmissionPlugin {
  const immortalSet = new Set(immortal);
  const admit = async (a: AdmissionAttributes): Promise<void> => {
    if (a.operation === 'DELETE' && isNamespaceKind(a) && immortalSet.has(a.name)) {
      throw forbidden(a, 'this namespace may not be deleted');
    }
    if (!a.namespace && !isNamespaceKind(a)) return;
    if (isNamespaceKind(a)) return;
    if (a.operation !== 'CREATE') return;
    if (isAccessReview(a)) return;
    const ns = await lookupNamespace(reader, a.namespace, true);
    if (!ns) throw errors.notFound(NAMESPACES, a.namespace);
    if (terminating(ns)) {
      const err = forbidden(a, `unable to create new content in namespace ${a.namespace} because it is being terminated`);
      const details = { ...(err.details ?? {}) };
      details.causes = [...(details.causes ?? []), { reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' }];
      throw new StatusError(err.code, err.reason, err.message, details);
    }
  };
  return {
    name: 'NamespaceLifecycle',
    // synchronous (no promise) for the common case: a create in a live namespace, or nothing to check
    mutate(a) {
      if (a.operation === 'DELETE') return isNamespaceKind(a) ? admit(a) : undefined;
      if (a.operation !== 'CREATE') return;
      if (!a.namespace || isNamespaceKind(a) || isAccessReview(a)) return;
      const ns = reader.get('', 'namespaces', '', a.namespace);
      if (ns && !terminating(ns)) return;
      return admit(a);
    },
  };
}

/** NamespaceExists: a create, update or delete of namespaced content needs its namespace */
export function namespaceExists(reader: ClusterReader): AdmissionPlugin {
  return {
    name: 'NamespaceExists',
    async validate(a) {
      if (!a.namespace || isNamespaceKind(a)) return;
      if (a.operation === 'CONNECT') return;
      const ns = await lookupNamespace(reader, a.namespace, a.operation === 'CREATE');
      if (!ns) throw errors.notFound(NAMESPACES, a.namespace);
    },
  };
}

/** NamespaceAutoProvision: a create in a missing namespace creates the namespace first */
export function namespaceAutoProvision(reader: ClusterReader, writer: ClusterWriter): AdmissionPlugin {
  return {
    name: 'NamespaceAutoProvision',
    async mutate(a) {
      if (a.operation !== 'CREATE' || !a.namespace || isNamespaceKind(a)) return;
      // a dry run must not create the namespace
      if (a.dryRun) return;
      if (reader.get('', 'namespaces', '', a.namespace)) return;
      if (!writer.create) throw errors.internal(new Error('NamespaceAutoProvision needs a writer that can create namespaces'));
      try {
        await writer.create('', 'namespaces', '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: a.namespace } });
      } catch (e) {
        if (e instanceof StatusError && e.code === 409) return;
        throw forbidden(a, e instanceof Error ? e.message : String(e));
      }
    },
  };
}
