// kustomize's field specs: where in which kinds a transformer writes (labels, annotations,
// namespaces, images, replicas) and where objects refer to each other by name (the
// nameReference configuration of the built-in kinds), with kustomize's rules for walking a path
// (`a/b/c`, `\/` for a slash inside a key, `x[]` for a list, lists crossed implicitly, fields
// created only where the spec says so).

type Obj = Record<string, any>;

export interface Gvk {
  group?: string;
  version?: string;
  kind?: string;
}

export interface FieldSpec extends Gvk {
  path: string;
  create?: boolean;
}

// ── where the pod specs are ──────────────────────────────────────────────────

interface PodHolder extends Gvk {
  /** the path of the PodSpec */
  spec: string;
}

const POD_HOLDERS: PodHolder[] = [
  { version: 'v1', kind: 'Pod', spec: 'spec' },
  { kind: 'PodTemplate', spec: 'template/spec' },
  { kind: 'Deployment', spec: 'spec/template/spec' },
  { kind: 'ReplicaSet', spec: 'spec/template/spec' },
  { kind: 'DaemonSet', spec: 'spec/template/spec' },
  { kind: 'StatefulSet', spec: 'spec/template/spec' },
  { kind: 'Job', spec: 'spec/template/spec' },
  { kind: 'CronJob', spec: 'spec/jobTemplate/spec/template/spec' },
];

const at = (h: PodHolder, path: string): FieldSpec => ({ kind: h.kind, ...(h.version ? { version: h.version } : {}), path: `${h.spec}/${path}` });

function configMapRefs(): FieldSpec[] {
  const out: FieldSpec[] = [];
  for (const h of POD_HOLDERS) {
    const paths =
      h.kind === 'CronJob'
        ? ['volumes/configMap/name', 'volumes/projected/sources/configMap/name', 'containers/env/valueFrom/configMapKeyRef/name', 'initContainers/env/valueFrom/configMapKeyRef/name', 'containers/envFrom/configMapRef/name', 'initContainers/envFrom/configMapRef/name']
        : ['volumes/configMap/name', 'containers/env/valueFrom/configMapKeyRef/name', 'initContainers/env/valueFrom/configMapKeyRef/name', 'containers/envFrom/configMapRef/name', 'initContainers/envFrom/configMapRef/name', 'volumes/projected/sources/configMap/name'];
    for (const p of paths) out.push(at(h, p));
  }
  out.push(
    { kind: 'Node', path: 'spec/configSource/configMap' },
    { kind: 'Role', path: 'rules/resourceNames' },
    { kind: 'ClusterRole', path: 'rules/resourceNames' },
    { kind: 'Ingress', path: 'metadata/annotations/nginx.ingress.kubernetes.io\\/fastcgi-params-configmap' },
  );
  return out;
}

function secretRefs(): FieldSpec[] {
  const out: FieldSpec[] = [];
  for (const h of POD_HOLDERS) {
    const paths =
      h.kind === 'CronJob'
        ? ['volumes/secret/secretName', 'volumes/projected/sources/secret/name', 'containers/env/valueFrom/secretKeyRef/name', 'initContainers/env/valueFrom/secretKeyRef/name', 'containers/envFrom/secretRef/name', 'initContainers/envFrom/secretRef/name', 'imagePullSecrets/name']
        : ['volumes/secret/secretName', 'containers/env/valueFrom/secretKeyRef/name', 'initContainers/env/valueFrom/secretKeyRef/name', 'containers/envFrom/secretRef/name', 'initContainers/envFrom/secretRef/name', 'imagePullSecrets/name', 'volumes/projected/sources/secret/name'];
    for (const p of paths) out.push(at(h, p));
  }
  out.push(
    { kind: 'Ingress', path: 'spec/tls/secretName' },
    { kind: 'Ingress', path: 'metadata/annotations/ingress.kubernetes.io\\/auth-secret' },
    { kind: 'Ingress', path: 'metadata/annotations/nginx.ingress.kubernetes.io\\/auth-secret' },
    { kind: 'Ingress', path: 'metadata/annotations/nginx.ingress.kubernetes.io\\/auth-tls-secret' },
    { kind: 'ServiceAccount', path: 'imagePullSecrets/name' },
    { kind: 'StorageClass', path: 'parameters/secretName' },
    { kind: 'StorageClass', path: 'parameters/adminSecretName' },
    { kind: 'StorageClass', path: 'parameters/userSecretName' },
    { kind: 'StorageClass', path: 'parameters/secretRef' },
    { kind: 'Role', path: 'rules/resourceNames' },
    { kind: 'ClusterRole', path: 'rules/resourceNames' },
    { group: 'serving.knative.dev', version: 'v1', kind: 'Service', path: 'spec/template/spec/containers/env/valueFrom/secretKeyRef/name' },
    { kind: 'PersistentVolume', path: 'spec/azureFile/secretName' },
  );
  return out;
}

/** kinds holding a pod template, for the references kustomize lists per kind */
const TEMPLATE_KINDS = ['StatefulSet', 'Deployment', 'ReplicationController', 'Job', 'DaemonSet'];

function perTemplate(path: string, cronPath: string, pod?: string): FieldSpec[] {
  const out: FieldSpec[] = [];
  if (pod) out.push({ kind: 'Pod', path: pod });
  for (const k of TEMPLATE_KINDS) out.push({ kind: k, path: `spec/template/spec/${path}` });
  out.push({ kind: 'CronJob', path: cronPath });
  return out;
}

export interface NameBackReference {
  /** the kind referred to */
  target: Gvk;
  /** where referrers name it */
  referrers: FieldSpec[];
}

/** kustomize's nameReference configuration for the built-in kinds. */
export const NAME_REFERENCES: NameBackReference[] = [
  ...['Deployment', 'ReplicationController', 'ReplicaSet', 'StatefulSet'].map((kind) => ({ target: { kind }, referrers: [{ kind: 'HorizontalPodAutoscaler', path: 'spec/scaleTargetRef/name' }] })),
  { target: { version: 'v1', kind: 'ConfigMap' }, referrers: configMapRefs() },
  { target: { version: 'v1', kind: 'Secret' }, referrers: secretRefs() },
  {
    target: { version: 'v1', kind: 'Service' },
    referrers: [
      { group: 'apps', kind: 'StatefulSet', path: 'spec/serviceName' },
      { kind: 'Ingress', path: 'spec/rules/http/paths/backend/serviceName' },
      { kind: 'Ingress', path: 'spec/backend/serviceName' },
      { kind: 'Ingress', path: 'spec/rules/http/paths/backend/service/name' },
      { kind: 'Ingress', path: 'spec/defaultBackend/service/name' },
      { group: 'apiregistration.k8s.io', kind: 'APIService', path: 'spec/service/name' },
      { group: 'admissionregistration.k8s.io', kind: 'ValidatingWebhookConfiguration', path: 'webhooks/clientConfig/service' },
      { group: 'admissionregistration.k8s.io', kind: 'MutatingWebhookConfiguration', path: 'webhooks/clientConfig/service' },
    ],
  },
  { target: { group: 'rbac.authorization.k8s.io', kind: 'Role' }, referrers: [{ group: 'rbac.authorization.k8s.io', kind: 'RoleBinding', path: 'roleRef/name' }] },
  {
    target: { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' },
    referrers: [
      { group: 'rbac.authorization.k8s.io', kind: 'RoleBinding', path: 'roleRef/name' },
      { group: 'rbac.authorization.k8s.io', kind: 'ClusterRoleBinding', path: 'roleRef/name' },
    ],
  },
  {
    target: { version: 'v1', kind: 'ServiceAccount' },
    referrers: [
      { group: 'rbac.authorization.k8s.io', kind: 'RoleBinding', path: 'subjects' },
      { group: 'rbac.authorization.k8s.io', kind: 'ClusterRoleBinding', path: 'subjects' },
      ...perTemplate('serviceAccountName', 'spec/jobTemplate/spec/template/spec/serviceAccountName', 'spec/serviceAccountName'),
    ],
  },
  { target: { version: 'v1', kind: 'PersistentVolumeClaim' }, referrers: perTemplate('volumes/persistentVolumeClaim/claimName', 'spec/jobTemplate/spec/template/spec/volumes/persistentVolumeClaim/claimName', 'spec/volumes/persistentVolumeClaim/claimName') },
  {
    target: { version: 'v1', kind: 'PersistentVolume' },
    referrers: [
      { kind: 'PersistentVolumeClaim', path: 'spec/volumeName' },
      { kind: 'ClusterRole', path: 'rules/resourceNames' },
    ],
  },
  {
    target: { group: 'storage.k8s.io', version: 'v1', kind: 'StorageClass' },
    referrers: [
      { kind: 'PersistentVolume', path: 'spec/storageClassName' },
      { kind: 'PersistentVolumeClaim', path: 'spec/storageClassName' },
      { kind: 'StatefulSet', path: 'spec/volumeClaimTemplates/spec/storageClassName' },
    ],
  },
  { target: { group: 'scheduling.k8s.io', version: 'v1', kind: 'PriorityClass' }, referrers: perTemplate('priorityClassName', 'spec/jobTemplate/spec/template/spec/priorityClassName', 'spec/priorityClassName') },
  { target: { group: 'networking.k8s.io/v1', version: 'v1', kind: 'IngressClass' }, referrers: [{ kind: 'Ingress', path: 'spec/ingressClassName' }] },
  { target: { group: 'admissionregistration.k8s.io', kind: 'ValidatingAdmissionPolicy' }, referrers: [{ group: 'admissionregistration.k8s.io', kind: 'ValidatingAdmissionPolicyBinding', path: 'spec/policyName' }] },
];

// ── labels, annotations, namespaces, images, replicas ────────────────────────

const TEMPLATE_LABEL_SPECS: FieldSpec[] = [
  { path: 'metadata/labels', create: true },
  { path: 'spec/template/metadata/labels', create: true, version: 'v1', kind: 'ReplicationController' },
  { path: 'spec/template/metadata/labels', create: true, kind: 'Deployment' },
  { path: 'spec/template/metadata/labels', create: true, kind: 'ReplicaSet' },
  { path: 'spec/template/metadata/labels', create: true, kind: 'DaemonSet' },
  { path: 'spec/template/metadata/labels', create: true, group: 'apps', kind: 'StatefulSet' },
  { path: 'spec/volumeClaimTemplates[]/metadata/labels', create: true, group: 'apps', kind: 'StatefulSet' },
  { path: 'spec/template/metadata/labels', create: true, group: 'batch', kind: 'Job' },
  { path: 'spec/jobTemplate/metadata/labels', create: true, group: 'batch', kind: 'CronJob' },
  { path: 'spec/jobTemplate/spec/template/metadata/labels', create: true, group: 'batch', kind: 'CronJob' },
];

function affinitySelectors(kind: string): FieldSpec[] {
  const base = 'spec/template/spec/affinity';
  return [
    `${base}/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels`,
    `${base}/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels`,
    `${base}/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels`,
    `${base}/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels`,
    'spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels',
  ].map((path) => ({ path, create: false, group: 'apps', kind }));
}

export const FIELD_SPECS = {
  /** commonLabels and `labels` with includeSelectors */
  commonLabels: [
    { path: 'spec/selector', create: true, version: 'v1', kind: 'Service' },
    { path: 'spec/selector', create: true, version: 'v1', kind: 'ReplicationController' },
    { path: 'spec/selector/matchLabels', create: true, kind: 'Deployment' },
    ...affinitySelectors('Deployment'),
    { path: 'spec/selector/matchLabels', create: true, kind: 'ReplicaSet' },
    { path: 'spec/selector/matchLabels', create: true, kind: 'DaemonSet' },
    { path: 'spec/selector/matchLabels', create: true, group: 'apps', kind: 'StatefulSet' },
    ...affinitySelectors('StatefulSet'),
    { path: 'spec/selector/matchLabels', create: false, group: 'batch', kind: 'Job' },
    { path: 'spec/jobTemplate/spec/selector/matchLabels', create: false, group: 'batch', kind: 'CronJob' },
    { path: 'spec/selector/matchLabels', create: false, group: 'policy', kind: 'PodDisruptionBudget' },
    { path: 'spec/podSelector/matchLabels', create: false, group: 'networking.k8s.io', kind: 'NetworkPolicy' },
    { path: 'spec/ingress/from/podSelector/matchLabels', create: false, group: 'networking.k8s.io', kind: 'NetworkPolicy' },
    { path: 'spec/egress/to/podSelector/matchLabels', create: false, group: 'networking.k8s.io', kind: 'NetworkPolicy' },
    ...TEMPLATE_LABEL_SPECS,
  ] as FieldSpec[],
  templateLabels: TEMPLATE_LABEL_SPECS,
  commonAnnotations: [
    { path: 'metadata/annotations', create: true },
    { path: 'spec/template/metadata/annotations', create: true, version: 'v1', kind: 'ReplicationController' },
    { path: 'spec/template/metadata/annotations', create: true, kind: 'Deployment' },
    { path: 'spec/template/metadata/annotations', create: true, kind: 'ReplicaSet' },
    { path: 'spec/template/metadata/annotations', create: true, kind: 'DaemonSet' },
    { path: 'spec/template/metadata/annotations', create: true, kind: 'StatefulSet' },
    { path: 'spec/template/metadata/annotations', create: true, group: 'batch', kind: 'Job' },
    { path: 'spec/jobTemplate/metadata/annotations', create: true, group: 'batch', kind: 'CronJob' },
    { path: 'spec/jobTemplate/spec/template/metadata/annotations', create: true, group: 'batch', kind: 'CronJob' },
  ] as FieldSpec[],
  /** besides metadata/namespace of every namespaced object */
  namespace: [
    { path: 'metadata/name', kind: 'Namespace', create: true },
    { path: 'spec/service/namespace', group: 'apiregistration.k8s.io', kind: 'APIService', create: true },
    { path: 'spec/conversion/webhook/clientConfig/service/namespace', group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' },
  ] as FieldSpec[],
  images: [
    { path: 'spec/containers[]/image', create: true },
    { path: 'spec/initContainers[]/image', create: true },
    { path: 'spec/template/spec/containers[]/image', create: true },
    { path: 'spec/template/spec/initContainers[]/image', create: true },
  ] as FieldSpec[],
  // in the order kustomize's merged configuration has them
  replicas: ['Deployment', 'StatefulSet', 'ReplicaSet', 'ReplicationController'].map((kind) => ({ path: 'spec/replicas', create: true, kind })) as FieldSpec[],
};

// ── walking a field spec ─────────────────────────────────────────────────────

export function splitGroupVersion(apiVersion: unknown): [string, string] {
  const av = typeof apiVersion === 'string' ? apiVersion : '';
  const i = av.indexOf('/');
  return i < 0 ? ['', av] : [av.slice(0, i), av.slice(i + 1)];
}

/** whether a GVK is selected by a selector whose empty fields match anything */
export function gvkSelected(g: Gvk, sel: Gvk): boolean {
  return (!sel.group || sel.group === (g.group ?? '')) && (!sel.version || sel.version === (g.version ?? '')) && (!sel.kind || sel.kind === (g.kind ?? ''));
}

export function objGvk(o: Obj): Gvk {
  const [group, version] = splitGroupVersion(o.apiVersion);
  return { group, version, kind: typeof o.kind === 'string' ? o.kind : '' };
}

/** `a/b\/c/d` → ['a', 'b/c', 'd'] */
export function splitPath(path: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < path.length; i++) {
    const ch = path[i]!;
    if (ch === '\\' && path[i + 1] === '/') {
      cur += '/';
      i++;
    } else if (ch === '/') {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

export type CreateKind = 'map' | 'scalar' | undefined;

/**
 * Calls `set(holder, key)` for each place the spec's path reaches in `o` (the value is
 * holder[key], possibly missing when created as a scalar). Missing fields are created (maps on
 * the way, `createKind` at the end) only when the spec says create and a kind is given.
 */
export function applyFieldSpec(o: Obj, fs: FieldSpec, createKind: CreateKind, set: (holder: any, key: string | number) => void): void {
  if (!gvkSelected(objGvk(o), fs)) return;
  const path = splitPath(fs.path);
  const walk = (holder: any, key: string | number, rest: string[]): void => {
    if (rest.length === 0) {
      set(holder, key);
      return;
    }
    const node = holder[key];
    if (node === null || node === undefined) return;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) walk(node, i, rest);
      return;
    }
    if (typeof node !== 'object') throw new KustomizeFieldError(`expected sequence or mapping node`);
    const seg = rest[0]!;
    const isSeq = seg.endsWith('[]');
    const field = isSeq ? seg.slice(0, -2) : seg;
    if (!field) throw new KustomizeFieldError('cannot set or create an empty field name');
    if (!fs.create || !createKind || isSeq) {
      if (!Object.prototype.hasOwnProperty.call(node, field)) return;
    } else if (rest.length <= 1) {
      if (node[field] === undefined || node[field] === null) node[field] = createKind === 'map' ? {} : null;
    } else if (node[field] === undefined || node[field] === null) node[field] = {};
    walk(node, field, rest.slice(1));
  };
  walk({ root: o }, 'root', path);
}

export class KustomizeFieldError extends Error {}
