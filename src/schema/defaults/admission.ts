// The pod defaults of kube-apiserver's default admission plugins (they need server state, so
// they are not scheme defaults): Priority (priority and preemptionPolicy from PriorityClasses),
// DefaultTolerationSeconds (the not-ready/unreachable tolerations), ServiceAccount (the service
// account name and its projected token volume), LimitRanger (container resources from the
// namespace's LimitRanges), and for other kinds StorageObjectInUseProtection (PV/PVC finalizers),
// DefaultStorageClass and DefaultIngressClass. The admission chain calls them on create, in
// kube-apiserver's plugin order: LimitRanger, ServiceAccount, Priority, DefaultTolerationSeconds,
// DefaultStorageClass, StorageObjectInUseProtection, DefaultIngressClass.
import { isEmpty, isNil, isObject, orderOf, put, putMapKey } from './engine.js';

const OBJECT_META_TYPE = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

const POD_SPEC = 'io.k8s.api.core.v1.PodSpec';
type Operation = 'CREATE' | 'UPDATE';

// ---------------------------------------------------------------------------------------------
// Priority

export interface PriorityClassInfo {
  name: string;
  value: number;
  globalDefault?: boolean;
  preemptionPolicy?: string;
}

/** The PriorityClasses kube-apiserver creates at start (scheduling.k8s.io/v1 JSON). */
export const SYSTEM_PRIORITY_CLASSES = [
  {
    kind: 'PriorityClass',
    apiVersion: 'scheduling.k8s.io/v1',
    metadata: { name: 'system-node-critical' },
    value: 2000001000,
    description: 'Used for system critical pods that must not be moved from their current node.',
    preemptionPolicy: 'PreemptLowerPriority',
  },
  {
    kind: 'PriorityClass',
    apiVersion: 'scheduling.k8s.io/v1',
    metadata: { name: 'system-cluster-critical' },
    value: 2000000000,
    description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
    preemptionPolicy: 'PreemptLowerPriority',
  },
];

export interface PriorityAdmission {
  operation: Operation;
  oldPod?: any;
  /** the PriorityClass of that name (the system classes included), or undefined */
  getClass(name: string): PriorityClassInfo | undefined;
  /** every PriorityClass (to find the global default) */
  listClasses(): PriorityClassInfo[];
}

/**
 * The Priority plugin for a pod. On create: spec.priority (and spec.preemptionPolicy) from the
 * pod's priorityClassName, or from the global default class (whose name the pod then takes), or
 * 0 and PreemptLowerPriority when there is none. On update: the old values are kept. Returns a
 * Forbidden message when the pod cannot be admitted.
 */
export function admitPodPriority(pod: any, a: PriorityAdmission): string | undefined {
  if (!isObject(pod)) return undefined;
  const spec = isObject(pod.spec) ? pod.spec : (pod.spec = {});
  const ord = orderOf(POD_SPEC);
  if (a.operation === 'UPDATE') {
    const old = a.oldPod?.spec;
    if (isNil(spec.priority) && !isNil(old?.priority)) put(spec, ord, 'priority', old.priority);
    if (isNil(spec.preemptionPolicy) && !isNil(old?.preemptionPolicy)) put(spec, ord, 'preemptionPolicy', old.preemptionPolicy);
    return undefined;
  }
  let priority: number;
  let policy: string | undefined;
  if (isEmpty(spec.priorityClassName)) {
    let def: PriorityClassInfo | undefined;
    // with several global defaults (a race), the lowest value wins
    for (const pc of a.listClasses()) if (pc.globalDefault && (!def || pc.value < def.value)) def = pc;
    if (def) {
      priority = def.value;
      policy = def.preemptionPolicy;
      put(spec, ord, 'priorityClassName', def.name);
    } else {
      priority = 0;
      policy = 'PreemptLowerPriority';
    }
  } else {
    const pc = a.getClass(spec.priorityClassName);
    if (!pc) return `no PriorityClass with name ${spec.priorityClassName} was found`;
    priority = pc.value;
    policy = pc.preemptionPolicy;
  }
  if (!isNil(spec.priority) && spec.priority !== priority) {
    return `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`;
  }
  put(spec, ord, 'priority', priority);
  if (policy !== undefined) {
    if (!isNil(spec.preemptionPolicy) && spec.preemptionPolicy !== policy) {
      return `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`;
    }
    put(spec, ord, 'preemptionPolicy', policy);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// DefaultTolerationSeconds

export const TAINT_NODE_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_NODE_UNREACHABLE = 'node.kubernetes.io/unreachable';

/**
 * The DefaultTolerationSeconds plugin (create and update of pods): a pod that does not already
 * tolerate the NoExecute not-ready and unreachable taints gets tolerations for them, for 300
 * seconds each (--default-not-ready-toleration-seconds, --default-unreachable-toleration-seconds).
 */
export function addDefaultTolerations(pod: any, notReadySeconds = 300, unreachableSeconds = 300): void {
  if (!isObject(pod)) return;
  const spec = isObject(pod.spec) ? pod.spec : (pod.spec = {});
  const list: any[] = Array.isArray(spec.tolerations) ? spec.tolerations : [];
  const tolerates = (key: string) =>
    list.some((t) => isObject(t) && (t.key === key || isEmpty(t.key)) && (t.effect === 'NoExecute' || isEmpty(t.effect)));
  const add: any[] = [];
  if (!tolerates(TAINT_NODE_NOT_READY)) add.push({ key: TAINT_NODE_NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: notReadySeconds });
  if (!tolerates(TAINT_NODE_UNREACHABLE)) add.push({ key: TAINT_NODE_UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: unreachableSeconds });
  if (add.length === 0) return;
  put(spec, orderOf(POD_SPEC), 'tolerations', [...list, ...add]);
}

// ---------------------------------------------------------------------------------------------
// ServiceAccount

export const SERVICE_ACCOUNT_TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
export const SERVICE_ACCOUNT_VOLUME_PREFIX = 'kube-api-access-';
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
/** the alphabet of Kubernetes' generated name suffixes (no vowels, no look-alikes) */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** A 5-character suffix as Kubernetes' SimpleNameGenerator makes them. */
export function randomNameSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += NAME_ALPHABET[Math.floor(Math.random() * NAME_ALPHABET.length)];
  return s;
}

export interface ServiceAccountAdmission {
  /** the pod's service account (core/v1 ServiceAccount JSON); undefined when it does not exist */
  serviceAccount?: any;
  /** the suffix of a new token volume's name; randomNameSuffix by default */
  suffix?: () => string;
}

/**
 * The ServiceAccount plugin on pod create: serviceAccountName "default" when unset (with its
 * serviceAccount alias); unless automounting is off (on the pod, or on the service account when
 * the pod does not say), a projected kube-api-access-xxxxx volume (token, kube-root-ca.crt, the
 * namespace) mounted read-only at /var/run/secrets/kubernetes.io/serviceaccount in every init
 * container and container that has nothing mounted there; the service account's image pull
 * secrets when the pod has none. Mirror pods are left alone. Returns a Forbidden message for a
 * missing service account (a pod of a namespace must have its service account).
 */
export function admitPodServiceAccount(pod: any, a: ServiceAccountAdmission): string | undefined {
  if (!isObject(pod)) return undefined;
  if (isObject(pod.metadata?.annotations) && MIRROR_POD_ANNOTATION in pod.metadata.annotations) return undefined;
  const spec = isObject(pod.spec) ? pod.spec : (pod.spec = {});
  const ord = orderOf(POD_SPEC);
  if (isEmpty(spec.serviceAccountName)) put(spec, ord, 'serviceAccountName', 'default');
  put(spec, ord, 'serviceAccount', spec.serviceAccountName);
  const sa = a.serviceAccount;
  if (!isObject(sa)) return `error looking up service account ${pod.metadata?.namespace ?? ''}/${spec.serviceAccountName}: serviceaccount "${spec.serviceAccountName}" not found`;

  const automount = !isNil(spec.automountServiceAccountToken) ? spec.automountServiceAccountToken !== false : sa.automountServiceAccountToken !== false;
  if (automount) {
    const volumes: any[] = Array.isArray(spec.volumes) ? spec.volumes : [];
    let volumeName = '';
    for (const v of volumes) {
      if (isObject(v) && typeof v.name === 'string' && v.name.startsWith(SERVICE_ACCOUNT_VOLUME_PREFIX)) {
        volumeName = v.name;
        break;
      }
    }
    const hasVolume = volumeName !== '';
    if (!hasVolume) volumeName = SERVICE_ACCOUNT_VOLUME_PREFIX + (a.suffix ?? randomNameSuffix)();
    let needsVolume = false;
    const mountOrd = orderOf('io.k8s.api.core.v1.Container');
    for (const list of [spec.initContainers, spec.containers]) {
      if (!Array.isArray(list)) continue;
      for (const c of list) {
        if (!isObject(c)) continue;
        const mounts: any[] = Array.isArray(c.volumeMounts) ? c.volumeMounts : [];
        if (mounts.some((m) => isObject(m) && m.mountPath === SERVICE_ACCOUNT_TOKEN_MOUNT_PATH)) continue;
        put(c, mountOrd, 'volumeMounts', [...mounts, { name: volumeName, readOnly: true, mountPath: SERVICE_ACCOUNT_TOKEN_MOUNT_PATH }]);
        needsVolume = true;
      }
    }
    if (!hasVolume && needsVolume) put(spec, ord, 'volumes', [...volumes, tokenVolume(volumeName)]);
  }
  if (isEmpty(spec.imagePullSecrets) && Array.isArray(sa.imagePullSecrets) && sa.imagePullSecrets.length > 0) {
    put(spec, ord, 'imagePullSecrets', sa.imagePullSecrets.map((s: any) => ({ name: s?.name ?? '' })));
  }
  return undefined;
}

/** the projected service account token volume, in Go's field order */
function tokenVolume(name: string): any {
  return {
    name,
    projected: {
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
      defaultMode: 420,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// LimitRanger

export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';

/**
 * The LimitRanger plugin on pod create: every container and init container gets the namespace's
 * LimitRange "Container" defaults (spec.limits[].default as limits, defaultRequest as requests)
 * for the resources it does not set, and the pod is annotated with what was set
 * ("LimitRanger plugin set: cpu request for container nginx; cpu limit for container nginx").
 * `limitRanges` are the namespace's core/v1 LimitRange objects, already defaulted (so a default
 * limit has become the default request too).
 */
export function applyLimitRangeDefaults(pod: any, limitRanges: any[]): void {
  if (!isObject(pod)) return;
  for (const lr of limitRanges) {
    const limits: Record<string, unknown> = {};
    const requests: Record<string, unknown> = {};
    for (const item of Array.isArray(lr?.spec?.limits) ? lr.spec.limits : []) {
      if (!isObject(item) || item.type !== 'Container') continue;
      if (isObject(item.default)) Object.assign(limits, item.default);
      if (isObject(item.defaultRequest)) Object.assign(requests, item.defaultRequest);
    }
    if (isEmpty(limits) && isEmpty(requests)) continue;
    const notes: string[] = [];
    const merge = (c: any, what: string) => {
      if (!isObject(c)) return;
      const ro = orderOf('io.k8s.api.core.v1.ResourceRequirements');
      if (!isObject(c.resources)) put(c, orderOf('io.k8s.api.core.v1.Container'), 'resources', {});
      const res = c.resources;
      const setLimits: string[] = [];
      const setRequests: string[] = [];
      const lim: Record<string, unknown> = isObject(res.limits) ? { ...res.limits } : {};
      const req: Record<string, unknown> = isObject(res.requests) ? { ...res.requests } : {};
      for (const [k, v] of Object.entries(limits)) if (!(k in lim)) (lim[k] = v), setLimits.push(k);
      for (const [k, v] of Object.entries(requests)) if (!(k in req)) (req[k] = v), setRequests.push(k);
      if (!isEmpty(lim)) put(res, ro, 'limits', sortedObject(lim));
      if (!isEmpty(req)) put(res, ro, 'requests', sortedObject(req));
      if (setRequests.length) notes.push(`${setRequests.sort().join(', ')} request for ${what} ${c.name}`);
      if (setLimits.length) notes.push(`${setLimits.sort().join(', ')} limit for ${what} ${c.name}`);
    };
    for (const c of Array.isArray(pod.spec?.containers) ? pod.spec.containers : []) merge(c, 'container');
    for (const c of Array.isArray(pod.spec?.initContainers) ? pod.spec.initContainers : []) merge(c, 'init container');
    if (notes.length) {
      const meta = isObject(pod.metadata) ? pod.metadata : (pod.metadata = {});
      if (!isObject(meta.annotations)) put(meta, orderOf(OBJECT_META_TYPE), 'annotations', {});
      putMapKey(meta.annotations, LIMIT_RANGER_ANNOTATION, `LimitRanger plugin set: ${notes.join('; ')}`);
    }
  }
}

function sortedObject(m: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(m).sort()) out[k] = m[k];
  return out;
}

// ---------------------------------------------------------------------------------------------
// StorageObjectInUseProtection, DefaultStorageClass, DefaultIngressClass

/** StorageObjectInUseProtection on create: PersistentVolumes get the kubernetes.io/pv-protection
 *  finalizer, PersistentVolumeClaims kubernetes.io/pvc-protection. */
export function addStorageProtectionFinalizer(obj: any, kind: 'PersistentVolume' | 'PersistentVolumeClaim'): void {
  if (!isObject(obj)) return;
  const fin = kind === 'PersistentVolume' ? 'kubernetes.io/pv-protection' : 'kubernetes.io/pvc-protection';
  const meta = isObject(obj.metadata) ? obj.metadata : (obj.metadata = {});
  const list: string[] = Array.isArray(meta.finalizers) ? meta.finalizers : [];
  if (list.includes(fin)) return;
  put(meta, orderOf(OBJECT_META_TYPE), 'finalizers', [...list, fin]);
}

const IS_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
const IS_DEFAULT_CLASS_BETA = 'storageclass.beta.kubernetes.io/is-default-class';
const BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';
const IS_DEFAULT_INGRESS_CLASS = 'ingressclass.kubernetes.io/is-default-class';
const INGRESS_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

/** The default among classes marked by an annotation: the newest one (then the first by name). */
function pickDefault(classes: any[], keys: string[]): string | undefined {
  const marked = classes.filter((c) => keys.some((k) => c?.metadata?.annotations?.[k] === 'true'));
  marked.sort((a, b) => {
    const ta = String(a.metadata?.creationTimestamp ?? '');
    const tb = String(b.metadata?.creationTimestamp ?? '');
    if (ta !== tb) return ta < tb ? 1 : -1;
    const na = String(a.metadata?.name ?? '');
    const nb = String(b.metadata?.name ?? '');
    return na < nb ? -1 : na > nb ? 1 : 0;
  });
  return marked[0]?.metadata?.name;
}

/** DefaultStorageClass on create: a claim that names no class (neither spec.storageClassName nor
 *  the beta annotation) gets the default StorageClass's name, if there is a default. */
export function applyDefaultStorageClass(pvc: any, storageClasses: any[]): void {
  if (!isObject(pvc)) return;
  if (!isNil(pvc.spec?.storageClassName)) return;
  if (isObject(pvc.metadata?.annotations) && BETA_STORAGE_CLASS in pvc.metadata.annotations) return;
  const name = pickDefault(storageClasses, [IS_DEFAULT_CLASS, IS_DEFAULT_CLASS_BETA]);
  if (name === undefined) return;
  const spec = isObject(pvc.spec) ? pvc.spec : (pvc.spec = {});
  put(spec, orderOf('io.k8s.api.core.v1.PersistentVolumeClaimSpec'), 'storageClassName', name);
}

/** DefaultIngressClass on create: an Ingress that names no class (neither spec.ingressClassName
 *  nor the kubernetes.io/ingress.class annotation) gets the default IngressClass's name. */
export function applyDefaultIngressClass(ingress: any, ingressClasses: any[]): void {
  if (!isObject(ingress)) return;
  if (!isNil(ingress.spec?.ingressClassName)) return;
  if (isObject(ingress.metadata?.annotations) && INGRESS_CLASS_ANNOTATION in ingress.metadata.annotations) return;
  const name = pickDefault(ingressClasses, [IS_DEFAULT_INGRESS_CLASS]);
  if (name === undefined) return;
  const spec = isObject(ingress.spec) ? ingress.spec : (ingress.spec = {});
  put(spec, orderOf('io.k8s.api.networking.v1.IngressSpec'), 'ingressClassName', name);
}
