// The pod defaults of kube-apiserver's default admission plugins (they need server state, so
// they are not scheme defaults): Priority (priority and preemptionPolicy from PriorityClasses),
// DefaultTolerationSeconds (the not-ready/unreachable tolerations), ServiceAccount (the service
// account name and its projected token volume). The admission chain calls them for pods, in
// Kubernetes' plugin order: ServiceAccount, Priority, DefaultTolerationSeconds.
import { isEmpty, isNil, isObject, orderOf, put } from './engine.js';

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
