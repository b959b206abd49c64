// NodeRestriction: what a kubelet (user system:node:<name> in group system:nodes) may change.
// It may create only mirror pods bound to itself (owned by its Node, referencing no service
// account, secret, config map, claim or trust bundle), delete and evict only pods bound to
// itself, update only the status of its own pods (not their labels), only its own Node object
// (not its taints, its config source, or labels outside the kubelet's set), only its own Lease in
// kube-node-lease and its own CSINode, only the capacity and conditions of a claim's status, and
// request service account tokens only for pods bound to itself.
//
// ServiceAccountNodeAudienceRestriction (beta, on by default in 1.33): a node's token request names
// at most one audience, and one the pod uses (the audience of one of its projected
// serviceAccountToken sources, "" for the API server's own; or one a CSIDriver of its volumes
// requests tokens for: an inline CSI volume, a claim's persistent volume, an ephemeral volume's
// claim, an in-tree volume migrated to CSI), unless the authorizer allows the node the verb
// `request-serviceaccounts-token-audience` on the audience as a resource of the core group (named
// after the service account, in its namespace): the kubelet's credential provider plugins ask for
// audiences no volume names.
import type { Authorizer } from '../authz.js';
import { stringifyJSON } from '../../codec/int64.js';
import type { AdmissionAttributes, AdmissionPlugin, ClusterReader } from './types.js';
import { asArray, forbidden, isObject, labelsOf, nodeIdentity } from './util.js';
import { errors } from '../../machinery/errors.js';
import { podSecretNames } from './serviceaccount.js';
import { goQuote } from '../../machinery/gostrings.js';

const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** the labels a kubelet may set on its own Node (k8s.io/kubelet/pkg/apis) */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

function labelNamespace(key: string): string {
  const i = key.indexOf('/');
  return i >= 0 ? key.slice(0, i) : '';
}

function isKubeletLabel(key: string): boolean {
  if (KUBELET_LABELS.has(key)) return true;
  const ns = labelNamespace(key);
  return KUBELET_LABEL_NAMESPACES.some((n) => ns === n || ns.endsWith('.' + n));
}

function isKubernetesLabel(key: string): boolean {
  const ns = labelNamespace(key);
  return ns === 'kubernetes.io' || ns.endsWith('.kubernetes.io') || ns === 'k8s.io' || ns.endsWith('.k8s.io');
}

function modifiedLabels(a: Record<string, string>, b: Record<string, string>): Set<string> {
  const out = new Set<string>();
  for (const [k, v] of Object.entries(a)) if (b[k] !== v) out.add(k);
  for (const [k, v] of Object.entries(b)) if (a[k] !== v) out.add(k);
  return out;
}

function forbiddenLabels(modified: Set<string>): string[] {
  const out = new Set<string>();
  for (const label of modified) {
    const ns = labelNamespace(label);
    if (ns === 'node-restriction.kubernetes.io' || ns.endsWith('.node-restriction.kubernetes.io')) out.add(label);
    if (isKubernetesLabel(label) && !isKubeletLabel(label)) out.add(label);
  }
  return [...out].sort();
}

/** deep equality of JSON values (semantic: absent and null alike) */
function same(a: unknown, b: unknown): boolean {
  const norm = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.length === 0 ? undefined : v.map(norm);
    if (isObject(v)) {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) {
        const n = norm(v[k]);
        if (n !== undefined && n !== null) out[k] = n;
      }
      return Object.keys(out).length ? out : undefined;
    }
    return v === null ? undefined : v;
  };
  return stringifyJSON(norm(a)) === stringifyJSON(norm(b));
}

/** the CSI drivers of in-tree volume plugins migrated to CSI (csi-translation-lib's, by the volume source's field) */
const MIGRATED_IN_TREE: Record<string, string> = {
  awsElasticBlockStore: 'ebs.csi.aws.com',
  azureDisk: 'disk.csi.azure.com',
  azureFile: 'file.csi.azure.com',
  cinder: 'cinder.csi.openstack.org',
  gcePersistentDisk: 'pd.csi.storage.gke.io',
  portworxVolume: 'pxd.portworx.com',
  vsphereVolume: 'csi.vsphere.vmware.com',
};

/** the CSI driver of a volume source (a pod's volume or a persistent volume's spec): its csi, or its migrated in-tree plugin's */
function csiDriverOf(src: any): string {
  if (!isObject(src)) return '';
  if (isObject(src.csi)) return typeof src.csi.driver === 'string' ? src.csi.driver : '';
  for (const [field, driver] of Object.entries(MIGRATED_IN_TREE)) if (isObject(src[field])) return driver;
  return '';
}

export interface NodeRestrictionOptions {
  /** ServiceAccountNodeAudienceRestriction (on by default in 1.33) */
  serviceAccountNodeAudienceRestriction?: boolean;
  /** asked whether a node may request a token for an audience its pod does not use */
  authorizer?: Authorizer;
}

export function nodeRestriction(reader: ClusterReader, opts: NodeRestrictionOptions = {}): AdmissionPlugin {
  const audienceRestriction = opts.serviceAccountNodeAudienceRestriction ?? true;
  const getPod = (a: AdmissionAttributes, name: string) => {
    const pod = reader.get('', 'pods', a.namespace, name);
    if (!pod) throw errors.notFound({ group: '', name: 'pods' }, name);
    return pod;
  };

  const admitPodCreate = (node: string, a: AdmissionAttributes) => {
    const pod = a.object;
    if (!isObject(pod)) throw forbidden(a, 'unexpected type');
    if (!(MIRROR_POD_ANNOTATION in (pod.metadata?.annotations ?? {}))) {
      throw forbidden(a, `pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${node}" can only create mirror pods`);
    }
    if ((pod.spec?.nodeName ?? '') !== node) throw forbidden(a, `node "${node}" can only create pods with spec.nodeName set to itself`);
    const owners = asArray(pod.metadata?.ownerReferences);
    if (owners.length > 1) throw forbidden(a, `node "${node}" can only create pods with a single owner reference set to itself`);
    if (owners.length === 0) throw forbidden(a, `node "${node}" can only create pods with an owner reference set to itself`);
    const owner = owners[0];
    if (owner?.apiVersion !== 'v1' || owner?.kind !== 'Node' || owner?.name !== node) {
      throw forbidden(a, `node "${node}" can only create pods with an owner reference set to itself`);
    }
    if (owner.controller !== true) throw forbidden(a, `node "${node}" can only create pods with a controller owner reference set to itself`);
    if (owner.blockOwnerDeletion === true) throw forbidden(a, `node "${node}" must not set blockOwnerDeletion on an owner reference`);
    const n = reader.get('', 'nodes', '', node);
    if (!n) throw errors.notFound({ group: '', name: 'nodes' }, node);
    if (owner.uid !== n.metadata?.uid) throw forbidden(a, `node ${node} UID mismatch: expected ${owner.uid ?? ''} got ${n.metadata?.uid ?? ''}`);
    if (pod.spec?.serviceAccountName) throw forbidden(a, `node "${node}" can not create pods that reference a service account`);
    if (podSecretNames(pod).length) throw forbidden(a, `node "${node}" can not create pods that reference secrets`);
    if (podConfigMapNames(pod).length) throw forbidden(a, `node "${node}" can not create pods that reference configmaps`);
    for (const v of asArray(pod.spec?.volumes)) {
      for (const src of asArray(v?.projected?.sources)) {
        if (src?.clusterTrustBundle) throw forbidden(a, `node "${node}" can not create pods that reference clustertrustbundles`);
      }
    }
    for (const v of asArray(pod.spec?.volumes)) {
      if (v?.persistentVolumeClaim) throw forbidden(a, `node "${node}" can not create pods that reference persistentvolumeclaims`);
    }
    for (const c of asArray(pod.spec?.resourceClaims)) {
      if (c) throw forbidden(a, `node "${node}" can not create pods that reference resourceclaims`);
    }
  };

  const admitPod = (node: string, a: AdmissionAttributes) => {
    switch (a.operation) {
      case 'CREATE':
        return admitPodCreate(node, a);
      case 'DELETE': {
        const pod = getPod(a, a.name);
        if ((pod.spec?.nodeName ?? '') !== node) throw forbidden(a, `node "${node}" can only delete pods with spec.nodeName set to itself`);
        return;
      }
      default:
        throw forbidden(a, `unexpected operation "${a.operation}", node "${node}" can only create and delete mirror pods`);
    }
  };

  const admitPodStatus = (node: string, a: AdmissionAttributes) => {
    if (a.operation !== 'UPDATE') throw forbidden(a, `unexpected operation "${a.operation}"`);
    const old = a.oldObject;
    if ((old?.spec?.nodeName ?? '') !== node) throw forbidden(a, `node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
    if (!same(labelsOf(old), labelsOf(a.object))) throw forbidden(a, `node "${node}" cannot update labels through pod status`);
    const claims = (p: any) => asArray(p?.status?.resourceClaimStatuses).map((s: any) => [s?.name, s?.resourceClaimName ?? null]);
    if (stringifyJSON(claims(old)) !== stringifyJSON(claims(a.object))) throw forbidden(a, `node "${node}" cannot update resource claim statues`);
  };

  const admitPodEviction = (node: string, a: AdmissionAttributes) => {
    if (a.operation !== 'CREATE') throw forbidden(a, `unexpected operation ${a.operation}`);
    let podName = a.name;
    if (!podName) {
      podName = a.object?.metadata?.name ?? '';
      if (!podName) throw forbidden(a, 'could not determine pod from request data');
    }
    const pod = getPod(a, podName);
    if ((pod.spec?.nodeName ?? '') !== node) throw forbidden(a, `node ${node} can only evict pods with spec.nodeName set to itself`);
  };

  const admitPVCStatus = (node: string, a: AdmissionAttributes) => {
    if (a.operation !== 'UPDATE') throw forbidden(a, `unexpected operation "${a.operation}"`);
    const strip = (o: any) => {
      const c = structuredClone(o ?? {});
      if (isObject(c.metadata)) {
        delete c.metadata.resourceVersion;
        delete c.metadata.managedFields;
      }
      if (isObject(c.status)) {
        delete c.status.capacity;
        delete c.status.conditions;
        delete c.status.allocatedResourceStatuses;
        delete c.status.allocatedResources;
      }
      return c;
    };
    if (!same(strip(a.oldObject), strip(a.object))) {
      throw forbidden(a, `node "${node}" is not allowed to update fields other than status.capacity and status.conditions`);
    }
  };

  const admitNode = (node: string, a: AdmissionAttributes) => {
    const requested = a.operation === 'CREATE' ? a.name || a.object?.metadata?.name || '' : a.name;
    if (requested !== node) throw forbidden(a, `node "${node}" is not allowed to modify node "${requested}"`);
    if (a.operation === 'CREATE') {
      const n = a.object;
      if (isObject(n?.spec?.configSource)) throw forbidden(a, `node "${node}" is not allowed to create pods with a non-nil configSource`);
      const bad = forbiddenLabels(modifiedLabels(labelsOf(n), {}));
      if (bad.length) throw forbidden(a, `node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`);
    }
    if (a.operation === 'UPDATE') {
      const n = a.object;
      const old = a.oldObject;
      if (isObject(n?.spec?.configSource) && !same(n.spec.configSource, old?.spec?.configSource)) {
        throw forbidden(a, `node "${node}" is not allowed to update configSource to a new non-nil configSource`);
      }
      if (!same(n?.spec?.taints, old?.spec?.taints)) throw forbidden(a, `node "${node}" is not allowed to modify taints`);
      const bad = forbiddenLabels(modifiedLabels(labelsOf(n), labelsOf(old)));
      if (bad.length) throw forbidden(a, `is not allowed to modify labels: ${bad.join(', ')}`);
    }
  };

  const admitServiceAccountToken = (node: string, a: AdmissionAttributes) => {
    if (a.operation !== 'CREATE' || a.subresource !== 'token') return;
    const ref = a.object?.spec?.boundObjectRef;
    if (!isObject(ref) || ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || !ref.name) throw forbidden(a, 'node requested token not bound to a pod');
    if (!ref.uid) throw forbidden(a, 'node requested token with a pod binding without a uid');
    const pod = getPod(a, ref.name);
    if (ref.uid !== pod.metadata?.uid) {
      throw forbidden(a, `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
    if ((pod.spec?.nodeName ?? '') !== node) throw forbidden(a, 'node requested token bound to a pod scheduled on a different node');
    if (audienceRestriction) validateNodeServiceAccountAudience(a, pod);
  };

  /** whether a CSIDriver requests tokens for the audience */
  const csiDriverHasAudience = (driver: string, audience: string): boolean => {
    const d = reader.get('storage.k8s.io', 'csidrivers', '', driver);
    return asArray(d?.spec?.tokenRequests).some((t: any) => (t?.audience ?? '') === audience);
  };

  /** the CSI driver of a claim's bound persistent volume ('' when there is none) */
  const csiDriverOfClaim = (namespace: string, claim: string): string => {
    const pvc = reader.get('', 'persistentvolumeclaims', namespace, claim);
    const pvName = pvc?.spec?.volumeName;
    if (typeof pvName !== 'string' || !pvName) return '';
    return csiDriverOf(reader.get('', 'persistentvolumes', '', pvName)?.spec);
  };

  /** podReferencesAudience: a projected token source, or a CSI driver of its volumes, asks for the audience */
  const podReferencesAudience = (pod: any, audience: string): boolean => {
    const ns = String(pod.metadata?.namespace ?? '');
    for (const v of asArray(pod.spec?.volumes)) {
      if (!isObject(v)) continue;
      for (const src of asArray(v.projected?.sources)) {
        if (isObject(src?.serviceAccountToken) && (src.serviceAccountToken.audience ?? '') === audience) return true;
      }
      let driver = '';
      if (isObject(v.csi)) driver = typeof v.csi.driver === 'string' ? v.csi.driver : '';
      else if (isObject(v.persistentVolumeClaim)) driver = csiDriverOfClaim(ns, String(v.persistentVolumeClaim.claimName ?? ''));
      else if (isObject(v.ephemeral) && isObject(v.ephemeral.volumeClaimTemplate)) driver = csiDriverOfClaim(ns, `${pod.metadata?.name ?? ''}-${v.name ?? ''}`);
      else driver = csiDriverOf(v);
      if (driver && csiDriverHasAudience(driver, audience)) return true;
    }
    return false;
  };

  const validateNodeServiceAccountAudience = (a: AdmissionAttributes, pod: any) => {
    const audiences = asArray(a.object?.spec?.audiences);
    if (audiences.length > 1) throw forbidden(a, 'node may only request 0 or 1 audiences');
    const audience = audiences.length ? String(audiences[0] ?? '') : '';
    if (podReferencesAudience(pod, audience)) return;
    const decision = opts.authorizer?.authorize({
      user: a.user,
      verb: 'request-serviceaccounts-token-audience',
      namespace: a.namespace,
      apiGroup: '',
      resource: audience,
      name: a.name,
      resourceRequest: true,
    }).decision;
    if (decision !== 'allow') throw forbidden(a, `audience ${goQuote(audience)} not found in pod spec volume, ${a.user.name} is not authorized to request tokens for this audience`);
  };

  const admitNamed = (node: string, a: AdmissionAttributes, what: string) => {
    const name = a.operation === 'CREATE' ? a.object?.metadata?.name ?? '' : a.name;
    if (name !== node) throw forbidden(a, `can only access ${what} with the same name as the requesting node`);
  };

  return {
    name: 'NodeRestriction',
    mutate(a) {
      if (a.operation === 'CONNECT') return;
      const id = nodeIdentity(a.user);
      if (!id) return;
      const node = id.node;
      if (!node) throw forbidden(a, `could not determine node from user "${a.user.name}"`);
      const gr = `${a.resource.group}/${a.resource.resource}`;
      switch (gr) {
        case '/pods':
          switch (a.subresource) {
            case '':
              return admitPod(node, a);
            case 'status':
              return admitPodStatus(node, a);
            case 'eviction':
              return admitPodEviction(node, a);
            default:
              throw forbidden(a, `unexpected pod subresource "${a.subresource}", only 'status' and 'eviction' are allowed`);
          }
        case '/nodes':
          return admitNode(node, a);
        case '/persistentvolumeclaims':
          if (a.subresource === 'status') return admitPVCStatus(node, a);
          throw forbidden(a, 'may only update PVC status');
        case '/serviceaccounts':
          return admitServiceAccountToken(node, a);
        case 'coordination.k8s.io/leases':
          if (a.namespace !== 'kube-node-lease') throw forbidden(a, 'can only access leases in the "kube-node-lease" system namespace');
          return admitNamed(node, a, 'node lease');
        case 'storage.k8s.io/csinodes':
          return admitNamed(node, a, 'CSINode');
        default:
          return;
      }
    },
  };
}

/** the config maps a pod references (podutil.VisitPodConfigmapNames) */
function podConfigMapNames(pod: any): string[] {
  const out: string[] = [];
  const spec = pod?.spec ?? {};
  for (const c of [...asArray(spec.initContainers), ...asArray(spec.containers), ...asArray(spec.ephemeralContainers)]) {
    for (const e of asArray(c?.envFrom)) if (e?.configMapRef?.name) out.push(e.configMapRef.name);
    for (const e of asArray(c?.env)) if (e?.valueFrom?.configMapKeyRef?.name) out.push(e.valueFrom.configMapKeyRef.name);
  }
  for (const v of asArray(spec.volumes)) {
    if (v?.configMap?.name) out.push(v.configMap.name);
    for (const src of asArray(v?.projected?.sources)) if (src?.configMap?.name) out.push(src.configMap.name);
  }
  return out;
}

