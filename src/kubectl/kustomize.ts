// A small kustomize for `-k DIR`: what kubectl's embedded kustomize does with the common fields of
// a kustomization.
//
// Supported: `resources` (files and directories holding kustomizations, nested), `bases`,
// `namespace` (namespaced objects; a Namespace object is renamed; cluster-scoped kinds are left
// alone), `namePrefix`/`nameSuffix` (with the name references of the built-in kinds updated:
// ConfigMaps, Secrets, ServiceAccounts, PersistentVolumeClaims, Roles, Services in Ingresses),
// `commonLabels` (labels, selectors and pod templates, as kustomize's field specs),
// `labels` (pairs with includeSelectors / includeTemplates), `commonAnnotations`, and the
// "legacy" output order (Namespace first, webhooks last). Generators, patches, images,
// replicas, components and remote resources are not supported and are reported as errors.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { yamlToJSONDocuments } from './goyaml.js';

type Obj = Record<string, any>;

const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];

/** Kinds kustomize knows to be cluster-scoped. */
const CLUSTER_SCOPED = new Set([
  'APIService',
  'CertificateSigningRequest',
  'ClusterRole',
  'ClusterRoleBinding',
  'ComponentStatus',
  'CSIDriver',
  'CSINode',
  'CustomResourceDefinition',
  'IngressClass',
  'MutatingWebhookConfiguration',
  'Namespace',
  'Node',
  'PersistentVolume',
  'PodSecurityPolicy',
  'PriorityClass',
  'PriorityLevelConfiguration',
  'FlowSchema',
  'RuntimeClass',
  'SelfSubjectAccessReview',
  'SelfSubjectRulesReview',
  'StorageClass',
  'SubjectAccessReview',
  'TokenReview',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'ValidatingWebhookConfiguration',
  'VolumeAttachment',
]);

const ORDER_FIRST = [
  'Namespace',
  'ResourceQuota',
  'StorageClass',
  'CustomResourceDefinition',
  'ServiceAccount',
  'PodSecurityPolicy',
  'Role',
  'ClusterRole',
  'RoleBinding',
  'ClusterRoleBinding',
  'ConfigMap',
  'Secret',
  'Endpoints',
  'Service',
  'LimitRange',
  'PriorityClass',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'Deployment',
  'StatefulSet',
  'CronJob',
  'PodDisruptionBudget',
];
const ORDER_LAST = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];

function typeOrder(kind: string): number {
  const i = ORDER_FIRST.indexOf(kind);
  if (i >= 0) return -ORDER_FIRST.length + i;
  const j = ORDER_LAST.indexOf(kind);
  if (j >= 0) return 1 + j;
  return 0;
}

function gvkString(o: Obj): string {
  const av = typeof o.apiVersion === 'string' ? o.apiVersion : '';
  const i = av.lastIndexOf('/');
  const g = i < 0 ? '' : av.slice(0, i);
  const v = i < 0 ? av : av.slice(i + 1);
  return [g || '~G', v || '~V', o.kind || '~K'].join('_');
}

function legacyLess(a: Obj, b: Obj): number {
  const ga = gvkString(a);
  const gb = gvkString(b);
  if (ga !== gb) {
    const oa = typeOrder(a.kind);
    const ob = typeOrder(b.kind);
    if (oa !== ob) return oa - ob;
    return ga < gb ? -1 : 1;
  }
  const sa = `${ga}|${a.metadata?.namespace ?? '~X'}|${a.metadata?.name ?? '~N'}`;
  const sb = `${gb}|${b.metadata?.namespace ?? '~X'}|${b.metadata?.name ?? '~N'}`;
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

export class KustomizeError extends Error {}

function findKustomization(dir: string): string {
  for (const f of KUSTOMIZATION_FILES) {
    const p = join(dir, f);
    if (existsSync(p)) return p;
  }
  throw new KustomizeError(`unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '${resolve(dir)}'`);
}

// ── field specs ───────────────────────────────────────────────────────────────

interface FieldSpec {
  path: string[];
  kinds?: string[];
  create: boolean;
}

const WORKLOADS = ['Deployment', 'ReplicaSet', 'DaemonSet', 'StatefulSet', 'Job', 'ReplicationController'];

const SELECTOR_SPECS: FieldSpec[] = [
  { path: ['spec', 'selector'], kinds: ['Service', 'ReplicationController'], create: true },
  { path: ['spec', 'selector', 'matchLabels'], kinds: ['Deployment', 'ReplicaSet', 'DaemonSet', 'StatefulSet'], create: true },
  { path: ['spec', 'selector', 'matchLabels'], kinds: ['PodDisruptionBudget'], create: false },
  { path: ['spec', 'podSelector', 'matchLabels'], kinds: ['NetworkPolicy'], create: false },
];

const TEMPLATE_LABEL_SPECS: FieldSpec[] = [
  { path: ['spec', 'template', 'metadata', 'labels'], kinds: WORKLOADS, create: true },
  { path: ['spec', 'jobTemplate', 'metadata', 'labels'], kinds: ['CronJob'], create: true },
  { path: ['spec', 'jobTemplate', 'spec', 'template', 'metadata', 'labels'], kinds: ['CronJob'], create: true },
  { path: ['spec', 'volumeClaimTemplates', '[]', 'metadata', 'labels'], kinds: ['StatefulSet'], create: true },
];

const TEMPLATE_ANNOTATION_SPECS: FieldSpec[] = [
  { path: ['spec', 'template', 'metadata', 'annotations'], kinds: WORKLOADS, create: true },
  { path: ['spec', 'jobTemplate', 'metadata', 'annotations'], kinds: ['CronJob'], create: true },
  { path: ['spec', 'jobTemplate', 'spec', 'template', 'metadata', 'annotations'], kinds: ['CronJob'], create: true },
];

function applyMap(o: Obj, spec: FieldSpec, pairs: Record<string, string>): void {
  if (spec.kinds && !spec.kinds.includes(o.kind)) return;
  const walk = (node: any, path: string[]): void => {
    if (path.length === 0) return;
    const [head, ...rest] = path as [string, ...string[]];
    if (head === '[]') {
      if (Array.isArray(node)) for (const el of node) walk(el, rest);
      return;
    }
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    if (rest.length === 0) {
      if (node[head] === undefined || node[head] === null) {
        if (!spec.create) return;
        node[head] = {};
      }
      if (typeof node[head] !== 'object' || Array.isArray(node[head])) return;
      Object.assign(node[head], pairs);
      return;
    }
    if (node[head] === undefined || node[head] === null) {
      if (!spec.create || rest[0] === '[]') return;
      node[head] = {};
    }
    walk(node[head], rest);
  };
  walk(o, spec.path);
}

function addLabels(objs: Obj[], pairs: Record<string, string>, selectors: boolean, templates: boolean): void {
  if (!pairs || Object.keys(pairs).length === 0) return;
  for (const o of objs) {
    applyMap(o, { path: ['metadata', 'labels'], create: true }, pairs);
    if (templates) for (const s of TEMPLATE_LABEL_SPECS) applyMap(o, s, pairs);
    if (selectors) for (const s of SELECTOR_SPECS) applyMap(o, s, pairs);
  }
}

function addAnnotations(objs: Obj[], pairs: Record<string, string>): void {
  if (!pairs || Object.keys(pairs).length === 0) return;
  for (const o of objs) {
    applyMap(o, { path: ['metadata', 'annotations'], create: true }, pairs);
    for (const s of TEMPLATE_ANNOTATION_SPECS) applyMap(o, s, pairs);
  }
}

// ── name references ──────────────────────────────────────────────────────────

function podSpecs(o: Obj): Obj[] {
  const out: Obj[] = [];
  const push = (x: any) => {
    if (x && typeof x === 'object') out.push(x);
  };
  if (o.kind === 'Pod') push(o.spec);
  else if (WORKLOADS.includes(o.kind)) push(o.spec?.template?.spec);
  else if (o.kind === 'CronJob') push(o.spec?.jobTemplate?.spec?.template?.spec);
  return out;
}

type Renames = Map<string, Map<string, string>>; // kind → old name → new name

function rename(renames: Renames, kind: string, holder: any, field: string): void {
  if (!holder || typeof holder !== 'object') return;
  const m = renames.get(kind);
  const v = holder[field];
  if (m && typeof v === 'string' && m.has(v)) holder[field] = m.get(v);
}

function fixNameReferences(objs: Obj[], renames: Renames): void {
  for (const o of objs) {
    for (const spec of podSpecs(o)) {
      for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? []), ...(spec.ephemeralContainers ?? [])]) {
        for (const e of c?.env ?? []) {
          rename(renames, 'ConfigMap', e?.valueFrom?.configMapKeyRef, 'name');
          rename(renames, 'Secret', e?.valueFrom?.secretKeyRef, 'name');
        }
        for (const e of c?.envFrom ?? []) {
          rename(renames, 'ConfigMap', e?.configMapRef, 'name');
          rename(renames, 'Secret', e?.secretRef, 'name');
        }
      }
      for (const v of spec.volumes ?? []) {
        rename(renames, 'ConfigMap', v?.configMap, 'name');
        rename(renames, 'Secret', v?.secret, 'secretName');
        rename(renames, 'PersistentVolumeClaim', v?.persistentVolumeClaim, 'claimName');
        for (const src of v?.projected?.sources ?? []) {
          rename(renames, 'ConfigMap', src?.configMap, 'name');
          rename(renames, 'Secret', src?.secret, 'name');
        }
      }
      for (const s of spec.imagePullSecrets ?? []) rename(renames, 'Secret', s, 'name');
      rename(renames, 'ServiceAccount', spec, 'serviceAccountName');
      rename(renames, 'ServiceAccount', spec, 'serviceAccount');
    }
    if (o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding') {
      if (o.roleRef) rename(renames, o.roleRef.kind, o.roleRef, 'name');
      for (const s of o.subjects ?? []) if (s?.kind === 'ServiceAccount') rename(renames, 'ServiceAccount', s, 'name');
    }
    if (o.kind === 'Ingress') {
      rename(renames, 'Service', o.spec?.defaultBackend?.service, 'name');
      for (const r of o.spec?.rules ?? []) for (const p of r?.http?.paths ?? []) rename(renames, 'Service', p?.backend?.service, 'name');
      for (const t of o.spec?.tls ?? []) rename(renames, 'Secret', t, 'secretName');
    }
    if (o.kind === 'StatefulSet') rename(renames, 'Service', o.spec, 'serviceName');
  }
}

// ── build ────────────────────────────────────────────────────────────────────

function readResources(path: string, warn: (line: string) => void): Obj[] {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new KustomizeError(`accumulating resources: accumulation err='accumulating resources from '${path}': open ${resolve(path)}: no such file or directory'`);
  }
  if (st.isDirectory()) return kustomizeBuild(path, warn);
  const docs = yamlToJSONDocuments(readFileSync(path, 'utf8'));
  const out: Obj[] = [];
  for (const d of docs) {
    if (d && typeof d === 'object' && !Array.isArray(d)) {
      const o = d as Obj;
      if (o.kind && /List$/.test(o.kind) && Array.isArray(o.items)) out.push(...(o.items as Obj[]));
      else out.push(o);
    }
  }
  return out;
}

const UNSUPPORTED = ['configMapGenerator', 'secretGenerator', 'patches', 'patchesStrategicMerge', 'patchesJson6902', 'images', 'replicas', 'components', 'generators', 'transformers', 'helmCharts', 'replacements', 'vars'];

const DEPRECATED: [string, string][] = [
  ['bases', 'resources'],
  ['commonLabels', 'labels'],
  ['imageTags', 'images'],
  ['patchesJson6902', 'patches'],
  ['patchesStrategicMerge', 'patches'],
  ['vars', 'replacements'],
];

/** The objects `kustomize build DIR` produces, in kustomize's legacy order; `warn` gets kustomize's deprecation notes. */
export function kustomizeBuild(dir: string, warn: (line: string) => void = () => {}): Obj[] {
  const file = findKustomization(dir);
  const docs = yamlToJSONDocuments(readFileSync(file, 'utf8'));
  const k = (docs[0] ?? {}) as Obj;
  for (const [old, neu] of DEPRECATED) {
    if (k[old] !== undefined) warn(`# Warning: '${old}' is deprecated. Please use '${neu}' instead. Run 'kustomize edit fix' to update your Kustomization automatically.`);
  }
  for (const f of UNSUPPORTED) {
    if (k[f] !== undefined && !(Array.isArray(k[f]) && k[f].length === 0)) throw new KustomizeError(`kustomization field ${JSON.stringify(f)} is not supported by keelson`);
  }
  const objs: Obj[] = [];
  for (const r of [...(k.bases ?? []), ...(k.resources ?? [])] as string[]) {
    if (/^[a-z]+:\/\//.test(r) || r.startsWith('github.com/')) throw new KustomizeError(`remote resource ${JSON.stringify(r)} is not supported by keelson`);
    objs.push(...readResources(join(dir, r), warn));
  }
  const renames: Renames = new Map();
  // namespace
  if (typeof k.namespace === 'string' && k.namespace) {
    for (const o of objs) {
      o.metadata ??= {};
      if (o.kind === 'Namespace') o.metadata.name = k.namespace;
      else if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = k.namespace;
    }
  }
  // prefix / suffix
  const prefix = typeof k.namePrefix === 'string' ? k.namePrefix : '';
  const suffix = typeof k.nameSuffix === 'string' ? k.nameSuffix : '';
  if (prefix || suffix) {
    for (const o of objs) {
      if (o.kind === 'Namespace' || o.kind === 'CustomResourceDefinition' || o.kind === 'APIService') continue;
      o.metadata ??= {};
      const old = o.metadata.name;
      if (typeof old !== 'string') continue;
      const neu = `${prefix}${old}${suffix}`;
      o.metadata.name = neu;
      if (!renames.has(o.kind)) renames.set(o.kind, new Map());
      renames.get(o.kind)!.set(old, neu);
    }
    fixNameReferences(objs, renames);
  }
  // labels
  addLabels(objs, k.commonLabels, true, true);
  for (const l of (k.labels ?? []) as Obj[]) addLabels(objs, l.pairs ?? {}, !!l.includeSelectors, !!l.includeSelectors || !!l.includeTemplates);
  addAnnotations(objs, k.commonAnnotations);
  return objs.slice().sort(legacyLess);
}
