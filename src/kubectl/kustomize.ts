// kustomize for `-k DIR`: what kubectl's embedded kustomize (v5) builds from a kustomization
// directory, following kustomize's own steps so that names and content come out the same.
//
// A kustomization is built as kustomize's KustTarget does: its resources are accumulated (files,
// and directories holding kustomizations, built recursively), then its generators run
// (configMapGenerator, secretGenerator: create, merge or replace), then its components (local
// directories of kind Component, applied to what is accumulated so far), then its transformers in
// kustomize's order: patchesStrategicMerge, patches, namespace, namePrefix, nameSuffix, labels and
// commonLabels, commonAnnotations, patchesJson6902, replicas, images. At the root only, the
// generated objects then get their name hash, and the references to renamed objects are fixed
// (kustomize's nameReference configuration of the built-in kinds); the objects come out in
// kustomize's legacy order.
//
// Each object carries what kustomize keeps in its build annotations: its previous ids, the
// prefixes and suffixes applied to it, whether it needs a hash suffix.
//
// Not supported, and refused with an error: remote resources and bases (URLs, git), helm charts,
// generator and transformer plugins (`generators`, `transformers`, `validators`), replacements,
// vars, `configurations`, `crds`, `openapi`, `sortOptions`, `buildMetadata`.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type * as YAMLModule from 'yaml';
import { yamlToJSONDocuments } from './goyaml.js';
import { hashObject } from './kustomize/hash.js';
import { FIELD_SPECS, NAME_REFERENCES, applyFieldSpec, gvkSelected, objGvk, splitGroupVersion, type FieldSpec, type Gvk } from './kustomize/fieldspecs.js';
import { makeConfigMap, makeSecret, mergeGlobalOptions, loadFile, type GeneratorArgs } from './kustomize/generators.js';
import { parseLabelSelector, matchLabels } from '../machinery/selectors.js';
import { re2 } from '../machinery/re2.js';

type Obj = Record<string, any>;

export class KustomizeError extends Error {}

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

// ── ids ──────────────────────────────────────────────────────────────────────

interface ResId {
  group: string;
  version: string;
  kind: string;
  name: string;
  namespace: string;
}

const NOT_A_NAMESPACE = '_non_namespaceable_';

function isClusterScoped(id: { kind?: string }): boolean {
  return CLUSTER_SCOPED.has(id.kind ?? '');
}

function effectiveNamespace(id: ResId): string {
  if (isClusterScoped(id)) return NOT_A_NAMESPACE;
  return id.namespace === '' || id.namespace === 'default' ? 'default' : id.namespace;
}

function idEquals(a: ResId, b: ResId): boolean {
  return effectiveNamespace(a) === effectiveNamespace(b) && a.name === b.name && a.group === b.group && a.version === b.version && a.kind === b.kind;
}

function gvkString(g: Gvk): string {
  return `${g.kind || '[noKind]'}.${g.version || '[noVer]'}.${g.group || '[noGrp]'}`;
}

/** resid.ResId.String() */
function idString(id: ResId): string {
  return `${gvkString(id)}/${id.name || '[noName]'}.${id.namespace || '[noNs]'}`;
}

/** the %#v of a resid.ResId */
function idGoSyntax(id: ResId): string {
  return `resid.ResId{Gvk:resid.Gvk{Group:${JSON.stringify(id.group)}, Version:${JSON.stringify(id.version)}, Kind:${JSON.stringify(id.kind)}, isClusterScoped:${isClusterScoped(id)}}, Name:${JSON.stringify(id.name)}, Namespace:${JSON.stringify(id.namespace)}}`;
}

// ── resources ────────────────────────────────────────────────────────────────

class Res {
  /** kustomize's build annotations, kept beside the object */
  prevNames: string[] = [];
  prevNamespaces: string[] = [];
  prevKinds: string[] = [];
  prefixes: string[] = [];
  suffixes: string[] = [];
  needsHash = false;
  behavior = '';
  constructor(public obj: Obj) {}

  get name(): string {
    const n = this.obj.metadata?.name;
    return typeof n === 'string' ? n : '';
  }
  get namespace(): string {
    const n = this.obj.metadata?.namespace;
    return typeof n === 'string' ? n : '';
  }
  get kind(): string {
    return typeof this.obj.kind === 'string' ? this.obj.kind : '';
  }
  setName(n: string): void {
    (this.obj.metadata ??= {}).name = n;
  }
  setNamespace(ns: string): void {
    if (ns === '') {
      if (this.obj.metadata) delete this.obj.metadata.namespace;
    } else (this.obj.metadata ??= {}).namespace = ns;
  }
  curId(): ResId {
    const g = objGvk(this.obj);
    return { group: g.group!, version: g.version!, kind: g.kind!, name: this.name, namespace: this.namespace };
  }
  prevIds(): ResId[] {
    const g = objGvk(this.obj);
    return this.prevNames.map((name, i) => ({ group: g.group!, version: g.version!, kind: this.prevKinds[i] ?? '', name, namespace: this.prevNamespaces[i] ?? '' }));
  }
  orgId(): ResId {
    return this.prevIds()[0] ?? this.curId();
  }
  allIds(): ResId[] {
    return [...this.prevIds(), this.curId()];
  }
  storePreviousId(): void {
    const id = this.curId();
    // kustomize appends to comma-separated annotations and skips empty values
    if (id.name) this.prevNames.push(id.name);
    this.prevNamespaces.push(effectiveNamespace(id));
    if (id.kind) this.prevKinds.push(id.kind);
  }
  labels(): Record<string, string> {
    const l = this.obj.metadata?.labels;
    return l && typeof l === 'object' ? l : {};
  }
  annotations(): Record<string, string> {
    const a = this.obj.metadata?.annotations;
    return a && typeof a === 'object' ? a : {};
  }
  isEmpty(): boolean {
    return this.obj === null || typeof this.obj !== 'object' || Object.keys(this.obj).length === 0;
  }
}

class ResMap {
  list: Res[] = [];

  byCurrentId(id: ResId): Res[] {
    return this.list.filter((r) => idEquals(r.curId(), id));
  }
  byAnyId(match: (id: ResId) => boolean): Res[] {
    return this.list.filter((r) => r.allIds().some(match));
  }
  append(r: Res): void {
    const id = r.curId();
    if (this.byCurrentId(id).length > 0) throw new KustomizeError(`may not add resource with an already registered id: ${idString(id)}`);
    this.list.push(r);
  }
  appendAll(rs: Res[]): void {
    for (const r of rs) this.append(r);
  }
  dropEmpties(): void {
    this.list = this.list.filter((r) => !r.isEmpty());
  }
  getById(id: ResId): Res {
    const r = this.byAnyId((x) => idEquals(x, id));
    if (r.length === 1) return r[0]!;
    const what = r.length > 1 ? `multiple matches for Id ${idString(id)}` : `no matches for Id ${idString(id)}`;
    throw new KustomizeError(`${what}; failed to find unique target for patch ${idString(id)}`);
  }

  /** resWrangler.appendReplaceOrMerge: a generated object joins the map */
  absorb(res: Res, where: string): void {
    const id = res.curId();
    const matches = this.byAnyId((x) => idEquals(x, id));
    const fail = (msg: string) => new KustomizeError(`merging from generator ${where}: ${msg}`);
    if (matches.length === 0) {
      if (res.behavior === 'merge' || res.behavior === 'replace') throw fail(`id ${idGoSyntax(id)} does not exist; cannot merge or replace`);
      this.append(res);
      return;
    }
    if (matches.length > 1) throw fail(`found multiple objects ${matches.map((m) => idString(m.curId())).join(' ')} that could accept merge of ${idString(id)}`);
    const old = matches[0]!;
    if (res.behavior !== 'merge' && res.behavior !== 'replace') throw fail(`id ${idGoSyntax(id)} exists; behavior must be merge or replace`);
    const behavior = res.behavior;
    copyMergeMetaData(res, old);
    if (behavior === 'merge') {
      const data = { ...(isMap(old.obj.data) ? old.obj.data : {}), ...(isMap(res.obj.data) ? res.obj.data : {}) };
      if (Object.keys(data).length > 0) res.obj.data = data;
      const bin = { ...(isMap(old.obj.binaryData) ? old.obj.binaryData : {}), ...(isMap(res.obj.binaryData) ? res.obj.binaryData : {}) };
      if (Object.keys(bin).length > 0) res.obj.binaryData = bin;
    }
    this.list[this.list.indexOf(old)] = res;
  }

  /** resWrangler.Select */
  select(t: Obj): Res[] {
    const rx = (p: unknown) => (typeof p === 'string' && p !== '' ? re2(`^(?:${p})$`) : null);
    const g = rx(t.group);
    const v = rx(t.version);
    const k = rx(t.kind);
    const n = rx(t.name);
    const ns = rx(t.namespace);
    const labelSel = typeof t.labelSelector === 'string' && t.labelSelector ? parseLabelSelector(t.labelSelector) : null;
    const annSel = typeof t.annotationSelector === 'string' && t.annotationSelector ? parseLabelSelector(t.annotationSelector) : null;
    return this.list.filter((r) => {
      const cur = r.curId();
      const org = r.orgId();
      if (ns && !ns.test(effectiveNamespace(org)) && !ns.test(effectiveNamespace(cur))) return false;
      if (n && !n.test(org.name) && !n.test(cur.name)) return false;
      if (g && !g.test(cur.group)) return false;
      if (v && !v.test(cur.version)) return false;
      if (k && !k.test(cur.kind)) return false;
      if (labelSel && !matchLabels(labelSel, r.labels())) return false;
      if (annSel && !matchLabels(annSel, r.annotations())) return false;
      return true;
    });
  }
}

const isMap = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Resource.CopyMergeMetaDataFieldsFrom: `res` takes the labels, annotations, name, namespace and build annotations of `old` */
function copyMergeMetaData(res: Res, old: Res): void {
  const labels = { ...old.labels(), ...res.labels() };
  const annotations = { ...old.annotations(), ...res.annotations() };
  res.obj.metadata ??= {};
  if (Object.keys(labels).length > 0) res.obj.metadata.labels = labels;
  else delete res.obj.metadata.labels;
  if (Object.keys(annotations).length > 0) res.obj.metadata.annotations = annotations;
  else delete res.obj.metadata.annotations;
  res.setName(old.name);
  res.setNamespace(old.namespace);
  // build annotations: the old object's win; the hash only when both want it
  res.prevNames = [...old.prevNames];
  res.prevNamespaces = [...old.prevNamespaces];
  res.prevKinds = [...old.prevKinds];
  res.prefixes = [...old.prefixes];
  res.suffixes = [...old.suffixes];
  res.needsHash = res.needsHash && old.needsHash;
  res.behavior = old.behavior;
}

// ── reading ──────────────────────────────────────────────────────────────────

function goMeta(o: Obj): string {
  const m = isMap(o.metadata) ? o.metadata : {};
  const s = (v: unknown) => (typeof v === 'string' ? v : '');
  const map = (v: unknown) => (isMap(v) ? `map[${Object.keys(v).sort().map((k) => `${k}:${v[k]}`).join(' ')}]` : 'map[]');
  return `{{${s(o.apiVersion)} ${s(o.kind)}} {{${s(m.name)} ${s(m.namespace)}} ${map(m.labels)} ${map(m.annotations)}}}`;
}

/**
 * YAML as kustomize reads resources and strategic merge patches (kyaml, go-yaml v3: the YAML 1.2
 * core schema, so `y`, `no` and `on` stay strings), as JSON values.
 */
let YAML: typeof YAMLModule | undefined;

function kyamlDocuments(text: string): unknown[] {
  const docs = YAML!.parseAllDocuments(text, { version: '1.2', schema: 'core', merge: true, intAsBigInt: false, uniqueKeys: true });
  const out: unknown[] = [];
  for (const d of docs) {
    if (d.errors.length > 0) throw new KustomizeError(d.errors[0]!.message);
    out.push(d.toJS({ maxAliasCount: -1 }) ?? null);
  }
  return out;
}

/** kustomize's resource factory: documents → objects (lists inlined at the end, empties dropped, kind and name required) */
function objectsFromText(text: string): Obj[] {
  const docs = kyamlDocuments(text);
  const queue: unknown[] = docs.filter((d) => d !== null && d !== undefined);
  const out: Obj[] = [];
  for (const d of queue) {
    if (!isMap(d)) throw new KustomizeError(`wrong node kind: expected MappingNode but got ${Array.isArray(d) ? 'SequenceNode' : 'ScalarNode'}: node contents:\n${String(d)}`);
    if (Object.keys(d).length === 0) continue;
    const kind = typeof d.kind === 'string' ? d.kind : '';
    if (kind === '') throw new KustomizeError(`missing kind in object ${goMeta(d)}`);
    if (!kind.endsWith('List') && !(typeof d.metadata?.name === 'string' && d.metadata.name !== '')) throw new KustomizeError(`missing metadata.name in object ${goMeta(d)}`);
  }
  while (queue.length > 0) {
    const d = queue.shift() as Obj;
    if (Object.keys(d).length === 0) continue;
    const kind = typeof d.kind === 'string' ? d.kind : '';
    if (!kind.endsWith('List') || !('items' in d)) {
      out.push(d);
      continue;
    }
    if (d.items === null) continue;
    if (!Array.isArray(d.items)) throw new KustomizeError(`expected array in ${kind}/items, but found ${typeof d.items}`);
    queue.push(...(d.items as Obj[]));
  }
  return out;
}

const REMOTE = /^(https?:\/\/|git::|git@|ssh:\/\/|github\.com\/|gitlab\.com\/|bitbucket\.org\/|file:\/\/)/;

function isRemote(p: string): boolean {
  return REMOTE.test(p) || /\?ref=/.test(p) || /\.git(\/\/|$|\?)/.test(p);
}

const KNOWN_FIELDS = new Set([
  'apiVersion', 'kind', 'metadata', 'openapi', 'namePrefix', 'nameSuffix', 'namespace', 'commonLabels', 'labels', 'commonAnnotations', 'patchesStrategicMerge', 'patchesJson6902', 'patches', 'images',
  'imageTags', 'replacements', 'replicas', 'vars', 'sortOptions', 'resources', 'components', 'crds', 'bases', 'configMapGenerator', 'secretGenerator', 'helmGlobals', 'helmCharts',
  'helmChartInflationGenerator', 'generatorOptions', 'configurations', 'generators', 'transformers', 'validators', 'buildMetadata',
]);

const UNSUPPORTED = ['openapi', 'replacements', 'vars', 'sortOptions', 'crds', 'helmGlobals', 'helmCharts', 'helmChartInflationGenerator', 'configurations', 'generators', 'transformers', 'validators', 'buildMetadata'];

const DEPRECATED: [string, string][] = [
  ['bases', 'resources'],
  ['commonLabels', 'labels'],
  ['imageTags', 'images'],
  ['patchesJson6902', 'patches'],
  ['patchesStrategicMerge', 'patches'],
  ['vars', 'replacements'],
];

interface Kustomization extends Obj {
  kind: string;
}

function loadKustomization(dir: string, warn: (line: string) => void): Kustomization {
  const found = KUSTOMIZATION_FILES.filter((f) => existsSync(join(dir, f)));
  if (found.length === 0) throw new KustomizeError(`unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '${resolve(dir)}'`);
  if (found.length > 1) throw new KustomizeError(`Found multiple kustomization files under: ${resolve(dir)}\n`);
  let docs: unknown[];
  try {
    docs = yamlToJSONDocuments(readFileSync(join(dir, found[0]!), 'utf8'));
  } catch (e) {
    throw new KustomizeError(`invalid Kustomization: ${(e as Error).message}`);
  }
  const k = (docs[0] ?? {}) as Obj;
  if (!isMap(k)) throw new KustomizeError(`invalid Kustomization: json: cannot unmarshal ${Array.isArray(k) ? 'array' : typeof k} into Go value of type types.Kustomization`);
  for (const f of Object.keys(k)) if (!KNOWN_FIELDS.has(f)) throw new KustomizeError(`invalid Kustomization: json: unknown field ${JSON.stringify(f)}`);
  for (const [old, neu] of DEPRECATED) {
    if (k[old] !== undefined && k[old] !== null) warn(`# Warning: '${old}' is deprecated. Please use '${neu}' instead. Run 'kustomize edit fix' to update your Kustomization automatically.`);
  }
  const rest = Object.keys(k).filter((f) => f !== 'apiVersion' && f !== 'kind' && k[f] !== null && k[f] !== undefined && !(Array.isArray(k[f]) && k[f].length === 0) && !(isMap(k[f]) && Object.keys(k[f]).length === 0) && k[f] !== '');
  if (rest.length === 0) throw new KustomizeError('kustomization.yaml is empty');
  const kind = typeof k.kind === 'string' && k.kind ? k.kind : 'Kustomization';
  const errs: string[] = [];
  if (kind !== 'Kustomization' && kind !== 'Component') errs.push('kind should be Kustomization or Component');
  const required = kind === 'Component' ? 'kustomize.config.k8s.io/v1alpha1' : 'kustomize.config.k8s.io/v1beta1';
  if (k.apiVersion && k.apiVersion !== required) errs.push(`apiVersion for ${kind} should be ${required}`);
  if (errs.length > 0) throw new KustomizeError(`Failed to read kustomization file under ${resolve(dir)}:\n${errs.join('\n')}`);
  for (const f of UNSUPPORTED) {
    if (rest.includes(f)) throw new KustomizeError(`kustomization field ${JSON.stringify(f)} is not supported by keelson`);
  }
  for (const l of (k.labels ?? []) as Obj[]) if (l && l.fields) throw new KustomizeError('kustomization field "labels[].fields" is not supported by keelson');
  return { ...k, kind } as Kustomization;
}

// ── transformers ─────────────────────────────────────────────────────────────

function setMapEntries(pairs: Record<string, unknown>) {
  const keys = Object.keys(pairs).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return (holder: any, key: string | number): void => {
    if (holder[key] === null || holder[key] === undefined) return;
    const m = holder[key];
    if (!isMap(m)) throw new KustomizeError(`wrong node kind: expected MappingNode but got ${Array.isArray(m) ? 'SequenceNode' : 'ScalarNode'}`);
    for (const k of keys) m[k] = pairs[k] === null || pairs[k] === undefined ? '' : String(pairs[k]);
  };
}

function applyMapTransformer(rm: ResMap, pairs: Record<string, unknown> | undefined, specs: FieldSpec[]): void {
  if (!isMap(pairs) || Object.keys(pairs).length === 0) return;
  const set = setMapEntries(pairs);
  for (const r of rm.list) for (const fs of specs) applyFieldSpec(r.obj, fs, 'map', set);
}

function namespaceTransform(rm: ResMap, ns: string): void {
  for (const r of rm.list) {
    if (r.isEmpty()) continue;
    r.storePreviousId();
    const o = r.obj;
    const gvk = objGvk(o);
    const set = (holder: any, key: string | number) => {
      holder[key] = ns;
    };
    if (!isClusterScoped(gvk)) applyFieldSpec(o, { path: 'metadata/namespace', create: true }, 'scalar', set);
    if ((gvk.kind === 'RoleBinding' || gvk.kind === 'ClusterRoleBinding') && Array.isArray(o.subjects)) {
      for (const s of o.subjects) if (isMap(s) && s.name === 'default') s.namespace = ns;
    }
    for (const fs of FIELD_SPECS.namespace) {
      if (fs.path === 'metadata/name' && o.apiVersion !== 'v1') continue;
      applyFieldSpec(o, fs, 'scalar', set);
    }
    if (rm.byCurrentId(r.curId()).length !== 1) throw new KustomizeError(`namespace transformation produces ID conflict: ${rm.byCurrentId(r.curId()).map((x) => idString(x.curId())).join(', ')}`);
  }
}

const PREFIX_SKIP: Gvk[] = [{ kind: 'CustomResourceDefinition' }, { group: 'apiregistration.k8s.io', kind: 'APIService' }, { kind: 'Namespace' }];

function affixTransform(rm: ResMap, affix: string, isPrefix: boolean): void {
  for (const r of rm.list) {
    const org = r.orgId();
    if (PREFIX_SKIP.some((s) => gvkSelected(org, s))) continue;
    if (isPrefix) r.prefixes.push(affix);
    else r.suffixes.push(affix);
    r.storePreviousId();
    applyFieldSpec(r.obj, { path: 'metadata/name' }, undefined, (holder, key) => {
      const v = holder[key];
      if (typeof v !== 'string') return;
      holder[key] = isPrefix ? affix + v : v + affix;
    });
  }
}

// images

function imageMatches(image: string, name: string): boolean {
  try {
    return re2(`^${name}(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?$`).test(image);
  } catch {
    return false;
  }
}

function splitImage(image: string): [string, string, string] {
  let search = image;
  let slash = image.indexOf('/');
  if (slash > 0) search = image.slice(slash);
  else slash = 0;
  let id = search.indexOf('@');
  let ic = search.indexOf(':');
  if (ic < 0 && id < 0) return [image, '', ''];
  if (id >= 0 && (id < ic || ic < 0)) {
    id += slash;
    return [image.slice(0, id), '', image.slice(id + 1)];
  }
  if (id >= 0 && ic >= 0) {
    id += slash;
    ic += slash;
    return [image.slice(0, ic), image.slice(ic + 1, id), image.slice(id + 1)];
  }
  ic += slash;
  return [image.slice(0, ic), image.slice(ic + 1), ''];
}

function updateImage(img: Obj, holder: any, key: string | number): void {
  const value = holder[key];
  if (value === null || value === undefined) return;
  if (typeof value !== 'string') {
    if (typeof value === 'object') throw new KustomizeError('wrong node kind: expected ScalarNode');
  }
  const s = String(value);
  if (!imageMatches(s, String(img.name ?? ''))) return;
  let [name, tag, digest] = splitImage(s);
  const newName = img.newName ? String(img.newName) : '';
  const newTag = img.newTag !== undefined && img.newTag !== null ? String(img.newTag) : '';
  const dig = img.digest ? String(img.digest) : '';
  const tagSuffix = img.tagSuffix ? String(img.tagSuffix) : '';
  if (newName) name = newName;
  if (newTag && dig) {
    tag = newTag;
    digest = dig;
  } else if (newTag) {
    tag = newTag;
    digest = '';
  } else if (dig) {
    tag = '';
    digest = dig;
  } else if (tagSuffix) {
    tag += tagSuffix;
    digest = '';
  }
  let out = name;
  if (tag) out += ':' + tag;
  if (digest) out += '@' + digest;
  holder[key] = out;
}

function imagesTransform(rm: ResMap, img: Obj): void {
  for (const r of rm.list) {
    if (r.kind === 'CustomResourceDefinition') continue;
    // the legacy filter: every containers/initContainers list anywhere in the object
    const walk = (node: any): void => {
      if (Array.isArray(node)) {
        node.forEach(walk);
        return;
      }
      if (!isMap(node)) return;
      for (const [k, v] of Object.entries(node)) {
        walk(v);
        if ((k === 'containers' || k === 'initContainers') && Array.isArray(v)) {
          for (const c of v) if (isMap(c) && c.image !== undefined) updateImage(img, c, 'image');
        }
      }
    };
    walk(r.obj);
    for (const fs of FIELD_SPECS.images) applyFieldSpec(r.obj, fs, undefined, (h, k) => updateImage(img, h, k));
  }
}

function replicasTransform(rm: ResMap, rep: Obj): void {
  let found = false;
  for (const fs of FIELD_SPECS.replicas) {
    const rs = rm.byAnyId((id) => id.name === rep.name && gvkSelected(id, fs));
    if (rs.length === 0) continue;
    found = true;
    for (const r of rs) {
      applyFieldSpec(r.obj, fs, 'scalar', (holder, key) => {
        holder[key] = typeof rep.count === 'number' ? rep.count : 0;
      });
    }
  }
  if (!found) throw new KustomizeError(`resource with name ${rep.name} does not match a config with the following GVK [${FIELD_SPECS.replicas.map((f) => gvkString(f)).join(' ')}]`);
}

// patches

interface Patching {
  applyStrategicMergePatch: (doc: unknown, patch: unknown, typeName: string | undefined) => unknown;
  applyJSONPatch: (doc: unknown, patch: unknown, options: Obj) => unknown;
  typeForKind: (group: string, version: string, kind: string) => { name: string } | undefined;
}

let patching: Patching | undefined;

async function loadPatching(): Promise<Patching> {
  if (!patching) {
    const [s, j, t] = await Promise.all([import('../patch/strategic.js'), import('../patch/jsonpatch.js'), import('../schema/types.js')]);
    patching = { applyStrategicMergePatch: s.applyStrategicMergePatch, applyJSONPatch: j.applyJSONPatch, typeForKind: t.typeForKind };
  }
  return patching;
}

function patchMessage(e: unknown): string {
  const err = e as Error & { detail?: string };
  return err.detail ?? err.message;
}

/** Resource.ApplySmPatch, with `$patch: delete` and `$patch: replace` at the top */
function applySmPatch(p: Patching, r: Res, patch: Obj, options: Obj): void {
  const name = r.name;
  const ns = r.namespace;
  const kind = r.kind;
  const allowName = !!options.allowNameChange;
  const allowKind = !!options.allowKindChange;
  if (allowName || allowKind) r.storePreviousId();
  const body = structuredClone(patch);
  if (body.$patch === 'delete') {
    r.obj = {};
    return;
  }
  if (body.$patch === 'replace') {
    delete body.$patch;
    r.obj = body;
  } else {
    const g = objGvk(r.obj);
    const t = p.typeForKind(g.group!, g.version!, g.kind!);
    try {
      r.obj = p.applyStrategicMergePatch(r.obj, body, t?.name ?? 'unknown') as Obj;
    } catch (e) {
      throw new KustomizeError(patchMessage(e));
    }
  }
  if (r.isEmpty()) return;
  if (!allowKind) r.obj.kind = kind;
  if (!allowName) r.setName(name);
  r.setNamespace(ns);
}

function resIdOf(o: Obj): ResId {
  const [group, version] = splitGroupVersion(o.apiVersion);
  return { group, version, kind: String(o.kind ?? ''), name: String(o.metadata?.name ?? ''), namespace: typeof o.metadata?.namespace === 'string' ? o.metadata.namespace : '' };
}

/** a patch text read as strategic merge patches (null when it is not one) */
function smPatchesFrom(text: string): Obj[] | null {
  try {
    return objectsFromText(text);
  } catch {
    return null;
  }
}

function jsonPatchFrom(text: string): unknown[] | null {
  if (text === '') return null;
  try {
    const v = text[0] === '[' ? JSON.parse(text) : yamlToJSONDocuments(text)[0];
    if (!Array.isArray(v)) return null;
    for (const op of v) if (!isMap(op)) return null;
    return v;
  } catch {
    return null;
  }
}

function goQuote(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function configYaml(c: Obj): string {
  // the builtin's configuration as kustomize prints it in errors (sigs.k8s.io/yaml of the struct)
  const lines: string[] = [];
  if (c.path) lines.push(`path: ${c.path}`);
  if (c.patch) lines.push(`patch: |\n${String(c.patch).replace(/\n$/, '').split('\n').map((l) => '  ' + l).join('\n')}`);
  return lines.join('\n') + '\n';
}

async function patchesTransform(rm: ResMap, dir: string, entry: Obj): Promise<void> {
  const p = await loadPatching();
  const trouble = (msg: string) => new KustomizeError(`trouble configuring builtin PatchTransformer with config: \`\n${configYaml(entry)}\`: ${msg}`);
  const patchText = typeof entry.patch === 'string' ? entry.patch.trim() : '';
  const path = typeof entry.path === 'string' ? entry.path : '';
  let text: string;
  let source: string;
  if (!patchText && !path) throw trouble(`must specify one of patch and path in\n${configYaml(entry)}`);
  if (patchText && path) throw trouble(`patch and path can't be set at the same time\n${configYaml(entry)}`);
  if (patchText) {
    text = patchText;
    source = `[patch: ${goQuote(text)}]`;
  } else {
    try {
      text = loadFile(dir, path).toString('utf8');
    } catch (e) {
      throw trouble(`failed to get the patch file from path(${path}): ${(e as Error).message}`);
    }
    source = `[path: ${goQuote(path)}]`;
  }
  const sm = smPatchesFrom(text);
  const json = sm === null ? jsonPatchFrom(text) : null;
  if (sm !== null && jsonPatchFrom(text) !== null) throw trouble(`illegally qualifies as both an SM and JSON patch: ${source}`);
  if (sm === null && json === null) throw trouble(`unable to parse SM or JSON patch from ${source}`);
  const options = isMap(entry.options) ? entry.options : {};
  const target = isMap(entry.target) ? entry.target : null;
  if (sm !== null) {
    if (target) {
      if (sm.length > 1) throw new KustomizeError(`Multiple Strategic-Merge Patches in one \`patches\` entry is not allowed to set \`patches.target\` field: ${source}`);
      if (sm.length === 0) return;
      const selected = new Set(rm.select(target));
      for (const r of rm.list) if (selected.has(r)) applySmPatch(p, r, sm[0]!, options);
      rm.dropEmpties();
      return;
    }
    for (const patch of sm) {
      const id = resIdOf(patch);
      let r: Res;
      try {
        r = rm.getById(id);
      } catch (e) {
        throw new KustomizeError(`no resource matches strategic merge patch "${idString(id)}": ${(e as Error).message}`);
      }
      applySmPatch(p, r, patch, options);
    }
    rm.dropEmpties();
    return;
  }
  if (!target) throw new KustomizeError(`must specify a target for JSON patch ${source}`);
  for (const r of rm.select(target)) {
    r.storePreviousId();
    try {
      r.obj = p.applyJSONPatch(r.obj, json, { fieldValidation: 'Ignore', maxOperations: Number.MAX_SAFE_INTEGER, maxCopyBytes: 0 }) as Obj;
    } catch (e) {
      throw new KustomizeError(patchMessage(e));
    }
  }
}

async function patchesStrategicMergeTransform(rm: ResMap, dir: string, entries: unknown[]): Promise<void> {
  const p = await loadPatching();
  const patches: Obj[] = [];
  for (const e of entries) {
    const s = String(e);
    let ps = smPatchesFrom(s);
    if (ps === null || (ps.length === 0 && !/\n/.test(s.trim()) && !s.trim().startsWith('{'))) {
      let text: string;
      try {
        text = loadFile(dir, s).toString('utf8');
      } catch (err) {
        throw new KustomizeError(`trouble configuring builtin PatchStrategicMergeTransformer with config: \`\npaths:\n- ${s}\n\`: ${(err as Error).message}`);
      }
      try {
        ps = objectsFromText(text);
      } catch (err) {
        throw new KustomizeError(`trouble configuring builtin PatchStrategicMergeTransformer with config: \`\npaths:\n- ${s}\n\`: ${(err as Error).message}`);
      }
    }
    patches.push(...ps);
  }
  for (const patch of patches) {
    const r = rm.getById(resIdOf(patch));
    applySmPatch(p, r, patch, {});
    rm.dropEmpties();
  }
}

async function patchesJson6902Transform(rm: ResMap, dir: string, entry: Obj): Promise<void> {
  const p = await loadPatching();
  const target = isMap(entry.target) ? entry.target : {};
  if (!target.name) throw new KustomizeError('trouble configuring builtin PatchJson6902Transformer with config: must specify the target name');
  let text = typeof entry.patch === 'string' ? entry.patch : '';
  const path = typeof entry.path === 'string' ? entry.path : '';
  if (!path && !text) throw new KustomizeError('trouble configuring builtin PatchJson6902Transformer with config: empty file path and empty jsonOp');
  if (path) {
    if (text) throw new KustomizeError('trouble configuring builtin PatchJson6902Transformer with config: must specify a file path or jsonOp, not both');
    text = loadFile(dir, path).toString('utf8');
    if (text === '') throw new KustomizeError(`trouble configuring builtin PatchJson6902Transformer with config: patch file '${path}' empty seems to be empty`);
  }
  const ops = jsonPatchFrom(text.trimStart().startsWith('[') ? text.trim() : text);
  if (ops === null) throw new KustomizeError(`trouble configuring builtin PatchJson6902Transformer with config: decoding ${text}`);
  if (ops.length === 0) throw new KustomizeError(`trouble configuring builtin PatchJson6902Transformer with config: patch appears to be empty; file=${path}, JsonOp=${text}`);
  for (const r of rm.select(target)) {
    try {
      r.obj = p.applyJSONPatch(r.obj, ops, { fieldValidation: 'Ignore', maxOperations: Number.MAX_SAFE_INTEGER, maxCopyBytes: 0 }) as Obj;
    } catch (e) {
      throw new KustomizeError(patchMessage(e));
    }
  }
}

// ── name references ──────────────────────────────────────────────────────────

function sameEndingSubSlice(a: string[], b: string[]): boolean {
  let shortest = a;
  let longest = b;
  if (shortest.length > longest.length) [shortest, longest] = [longest, shortest];
  const diff = longest.length - shortest.length;
  if (shortest.length === 0) return diff === 0;
  for (let i = shortest.length - 1; i >= 0; i--) if (longest[i + diff] !== shortest[i]) return false;
  return true;
}

function prefixSuffixEquals(r: Res, o: Res, allowEmpty: boolean): boolean {
  if (allowEmpty) {
    const eitherPrefixEmpty = r.prefixes.length === 0 || o.prefixes.length === 0;
    const eitherSuffixEmpty = r.suffixes.length === 0 || o.suffixes.length === 0;
    return (eitherPrefixEmpty || sameEndingSubSlice(r.prefixes, o.prefixes)) && (eitherSuffixEmpty || sameEndingSubSlice(r.suffixes, o.suffixes));
  }
  return sameEndingSubSlice(r.prefixes, o.prefixes) && sameEndingSubSlice(r.suffixes, o.suffixes);
}

function selectReferral(referrer: Res, fieldPath: string, target: Gvk, oldName: string, candidates: Res[], identical: (rs: Res[]) => boolean): Res | null {
  let cs = candidates.filter((r) => r.prevIds().some((id) => id.name === oldName));
  cs = cs.filter((r) => r.prevIds().some((id) => gvkSelected(id, target)));
  if (fieldPath.endsWith('roleRef/name')) {
    const rr = referrer.obj.roleRef;
    if (isMap(rr) && rr.apiGroup !== undefined && rr.apiGroup !== null && rr.kind !== undefined && rr.kind !== null) {
      const g = { group: String(rr.apiGroup), kind: String(rr.kind) };
      cs = cs.filter((r) => r.prevIds().some((id) => gvkSelected(id, g)));
    }
  }
  const refId = referrer.curId();
  if (!isClusterScoped(refId)) cs = cs.filter((r) => isClusterScoped(r.curId()) || r.kind === 'ServiceAccount' || effectiveNamespace(refId) === effectiveNamespace(r.curId()));
  if (cs.length === 1) return cs[0]!;
  cs = cs.filter((r) => prefixSuffixEquals(r, referrer, true));
  if (cs.length > 1) cs = cs.filter((r) => prefixSuffixEquals(r, referrer, false));
  if (cs.length === 1) return cs[0]!;
  if (cs.length === 0) return null;
  if (identical(cs)) return cs[0]!;
  throw new KustomizeError(`found multiple possible referrals: ${cs.map((r) => idString(r.curId())).join(', ')}`);
}

function candidatesFor(rm: ResMap, referrer: Res): Res[] {
  const refId = referrer.curId();
  if (isClusterScoped(refId)) return rm.list;
  const rbNamespaces = new Set<string>();
  if (referrer.kind === 'RoleBinding' && Array.isArray(referrer.obj.subjects)) {
    for (const s of referrer.obj.subjects) if (isMap(s) && s.kind === 'ServiceAccount' && typeof s.namespace === 'string') rbNamespaces.add(s.namespace);
  }
  return rm.list.filter((r) => {
    const id = r.curId();
    return isClusterScoped(id) || effectiveNamespace(id) === effectiveNamespace(refId) || rbNamespaces.has(r.namespace);
  });
}

function fixNameReferences(rm: ResMap): void {
  const filters = new Map<Res, { fs: FieldSpec; target: Gvk }[]>();
  for (const br of NAME_REFERENCES) {
    for (const fs of br.referrers) {
      for (const r of rm.list) {
        if (!gvkSelected(r.orgId(), fs)) continue;
        if (!filters.has(r)) filters.set(r, []);
        filters.get(r)!.push({ fs, target: br.target });
      }
    }
  }
  for (const [r, list] of filters) {
    const candidates = candidatesFor(rm, r);
    for (const { fs, target } of list) {
      const setScalar = (holder: any, key: string | number) => {
        const v = holder[key];
        const old = typeof v === 'string' ? v : String(v);
        const ref = selectReferral(r, fs.path, target, old, candidates, (rs) => rs.every((x) => x.name === rs[0]!.name));
        if (ref && ref.name !== old) holder[key] = ref.name;
      };
      const setMapping = (node: Obj) => {
        if (!('name' in node)) throw new KustomizeError('path config error; no \'name\' field in node');
        let cs = candidates;
        if ('namespace' in node) {
          const ns = String(node.namespace);
          const byOrg = cs.filter((c) => effectiveNamespace(c.orgId()) === ns && effectiveNamespace(c.orgId()) !== NOT_A_NAMESPACE);
          cs = byOrg.length > 0 || cs.some((c) => effectiveNamespace(c.orgId()) === ns) ? byOrg : cs.filter((c) => effectiveNamespace(c.curId()) === ns && effectiveNamespace(c.curId()) !== NOT_A_NAMESPACE);
        }
        const old = String(node.name);
        const ref = selectReferral(r, fs.path, target, old, cs, (rs) => rs.every((x) => x.name === rs[0]!.name && x.namespace === rs[0]!.namespace));
        if (!ref) return;
        if (ref.name === old && ref.namespace === '') return;
        node.name = ref.name;
        if (ref.namespace !== '') node.namespace = ref.namespace;
      };
      applyFieldSpec(r.obj, { ...fs, kind: fs.kind, create: false }, undefined, (holder, key) => {
        const v = holder[key];
        if (v === null || v === undefined) return;
        if (Array.isArray(v)) {
          for (let i = 0; i < v.length; i++) {
            const e = v[i];
            if (isMap(e)) setMapping(e);
            else if (e !== null && e !== undefined && !Array.isArray(e)) setScalar(v, i);
          }
        } else if (isMap(v)) setMapping(v);
        else setScalar(holder, key);
      });
    }
  }
}

// ── the build ────────────────────────────────────────────────────────────────

function accumulateFile(rm: ResMap, dir: string, path: string): void {
  const text = loadFile(dir, path).toString('utf8');
  const objs = objectsFromText(text);
  try {
    rm.appendAll(objs.map((o) => new Res(o)));
  } catch (e) {
    throw new KustomizeError(`merging resources from '${path}': ${(e as Error).message}`);
  }
}

async function accumulateResources(rm: ResMap, dir: string, paths: unknown[], warn: (line: string) => void): Promise<void> {
  for (const raw of paths) {
    const path = String(raw);
    const abs = resolve(dir, path);
    let st: ReturnType<typeof statSync> | undefined;
    try {
      st = statSync(abs);
    } catch {
      st = undefined;
    }
    if (!st && isRemote(path)) throw new KustomizeError(`accumulating resources: remote resource ${JSON.stringify(path)} is not supported by keelson (only local files and directories)`);
    if (st && st.isDirectory()) {
      try {
        await accumulateDirectory(rm, abs, false, warn);
      } catch (e) {
        throw new KustomizeError(`accumulating resources: accumulation err='accumulating resources from '${path}': '${abs}' must resolve to a file': ${(e as Error).message}`);
      }
      continue;
    }
    let fileErr: string;
    try {
      accumulateFile(rm, dir, path);
      continue;
    } catch (e) {
      const m = (e as Error).message;
      fileErr = m.startsWith('merging resources from') ? m : `accumulating resources from '${path}': ${m}`;
    }
    const dirErr = st ? `must build at directory: '${abs}': file is not directory` : `must build at directory: not a valid directory: evalsymlink failure on '${abs}' : lstat ${abs}: no such file or directory`;
    throw new KustomizeError(`accumulating resources: accumulation err='${fileErr}': ${dirErr}`);
  }
}

async function accumulateDirectory(rm: ResMap, dir: string, isComponent: boolean, warn: (line: string) => void): Promise<ResMap> {
  let k: Kustomization;
  try {
    k = loadKustomization(dir, warn);
  } catch (e) {
    throw new KustomizeError(`couldn't make target for path '${resolve(dir)}': ${(e as Error).message}`);
  }
  if (isComponent && k.kind !== 'Component') throw new KustomizeError(`expected kind 'Component' for path '${resolve(dir)}' but got '${k.kind}'`);
  if (!isComponent && k.kind === 'Component') throw new KustomizeError(`expected kind != 'Component' for path '${resolve(dir)}'`);
  try {
    if (isComponent) {
      const out = await accumulateTarget(k, dir, rm, warn);
      return out;
    }
    const sub = await accumulateTarget(k, dir, new ResMap(), warn);
    try {
      rm.appendAll(sub.list);
    } catch (e) {
      throw new KustomizeError(`recursed merging from path '${resolve(dir)}': ${(e as Error).message}`);
    }
    return rm;
  } catch (e) {
    if ((e as Error).message.startsWith('recursed merging')) throw e;
    throw new KustomizeError(`recursed accumulation of path '${resolve(dir)}': ${(e as Error).message}`);
  }
}

function runGenerators(rm: ResMap, k: Kustomization, dir: string): void {
  const global = isMap(k.generatorOptions) ? k.generatorOptions : undefined;
  const run = (list: unknown, kind: 'ConfigMap' | 'Secret') => {
    for (const raw of (Array.isArray(list) ? list : []) as GeneratorArgs[]) {
      const args: GeneratorArgs = { ...raw, options: mergeGlobalOptions(raw.options, global) };
      const obj = kind === 'ConfigMap' ? makeConfigMap(dir, args) : makeSecret(dir, args);
      const res = new Res(obj);
      res.needsHash = !args.options?.disableNameSuffixHash;
      res.behavior = ['create', 'merge', 'replace'].includes(String(args.behavior ?? 'create')) ? String(args.behavior ?? 'create') : 'unspecified';
      if (args.behavior === undefined || args.behavior === '') res.behavior = 'create';
      rm.absorb(res, '&{0xc000000000 <nil>}');
    }
  };
  run(k.configMapGenerator, 'ConfigMap');
  run(k.secretGenerator, 'Secret');
}

async function accumulateTarget(k: Kustomization, dir: string, rm: ResMap, warn: (line: string) => void): Promise<ResMap> {
  const resources = [...((k.resources ?? []) as unknown[]), ...((k.bases ?? []) as unknown[])];
  await accumulateResources(rm, dir, resources, warn);
  runGenerators(rm, k, dir);
  for (const c of (k.components ?? []) as unknown[]) {
    const path = String(c);
    const abs = resolve(dir, path);
    if (!existsSync(abs) && isRemote(path)) throw new KustomizeError(`accumulating components: remote component ${JSON.stringify(path)} is not supported by keelson (only local directories)`);
    try {
      rm = await accumulateDirectory(rm, abs, true, warn);
    } catch (e) {
      throw new KustomizeError(`accumulating components: accumulateDirectory: ${JSON.stringify((e as Error).message)}`);
    }
  }
  // transformers, in kustomize's order
  if (Array.isArray(k.patchesStrategicMerge) && k.patchesStrategicMerge.length > 0) await patchesStrategicMergeTransform(rm, dir, k.patchesStrategicMerge);
  for (const p of (k.patches ?? []) as Obj[]) {
    await patchesTransform(rm, dir, p);
    rm.dropEmpties();
  }
  if (typeof k.namespace === 'string' && k.namespace) namespaceTransform(rm, k.namespace);
  if (typeof k.namePrefix === 'string' && k.namePrefix) affixTransform(rm, k.namePrefix, true);
  if (typeof k.nameSuffix === 'string' && k.nameSuffix) affixTransform(rm, k.nameSuffix, false);
  const commonLabels = isMap(k.commonLabels) ? k.commonLabels : {};
  for (const l of (k.labels ?? []) as Obj[]) {
    if (!isMap(l)) continue;
    const pairs = isMap(l.pairs) ? l.pairs : {};
    const specs = l.includeSelectors ? FIELD_SPECS.commonLabels : l.includeTemplates ? FIELD_SPECS.templateLabels : [{ path: 'metadata/labels', create: true }];
    applyMapTransformer(rm, pairs, specs);
  }
  applyMapTransformer(rm, commonLabels, FIELD_SPECS.commonLabels);
  applyMapTransformer(rm, isMap(k.commonAnnotations) ? k.commonAnnotations : undefined, FIELD_SPECS.commonAnnotations);
  for (const p of (k.patchesJson6902 ?? []) as Obj[]) await patchesJson6902Transform(rm, dir, isMap(p) ? p : {});
  for (const r of (k.replicas ?? []) as Obj[]) replicasTransform(rm, isMap(r) ? r : {});
  for (const img of [...((k.images ?? []) as Obj[]), ...((k.imageTags ?? []) as Obj[])]) imagesTransform(rm, isMap(img) ? img : {});
  rm.dropEmpties();
  return rm;
}

// ── order ────────────────────────────────────────────────────────────────────

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

function stableGvk(o: Obj): string {
  const g = objGvk(o);
  return [g.group || '~G', g.version || '~V', g.kind || '~K'].join('_');
}

function legacyLess(a: Obj, b: Obj): number {
  const ga = stableGvk(a);
  const gb = stableGvk(b);
  if (ga !== gb) {
    const oa = typeOrder(a.kind);
    const ob = typeOrder(b.kind);
    if (oa !== ob) return oa - ob;
    return ga < gb ? -1 : 1;
  }
  const sa = `${ga}|${a.metadata?.namespace || '~X'}|${a.metadata?.name || '~N'}`;
  const sb = `${gb}|${b.metadata?.namespace || '~X'}|${b.metadata?.name || '~N'}`;
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/**
 * The objects `kubectl kustomize DIR` prints, in its order; `warn` gets kustomize's deprecation
 * notes. Throws KustomizeError with kustomize's messages.
 */
export async function kustomizeBuild(dir: string, warn: (line: string) => void = () => {}): Promise<Obj[]> {
  // loaded here, not at start-up: most `keelson patch` commands have no -k
  YAML ??= (await import('yaml')).default as unknown as typeof YAMLModule;
  try {
    // (a Component directory at the root is built as a kustomization of its own, as kustomize does)
    const k = loadKustomization(dir, warn);
    const rm = await accumulateTarget(k, dir, new ResMap(), warn);
    // the hash suffixes of generated objects, then the references to every renamed object
    for (const r of rm.list) {
      if (!r.needsHash) continue;
      const h = hashObject(r.obj);
      r.storePreviousId();
      r.setName(`${r.name}-${h}`);
    }
    fixNameReferences(rm);
    return rm.list.map((r) => r.obj).sort(legacyLess);
  } catch (e) {
    if (e instanceof KustomizeError) throw e;
    throw new KustomizeError((e as Error).message);
  }
}

