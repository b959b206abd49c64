// The Node authorizer: what a kubelet (user `system:node:<name>` in group `system:nodes`) may do.
//
//  - its own Node: get, list and watch by name; create, update, patch (NodeRestriction admission
//    limits these to its own object); update and patch of nodes/status;
//  - pods: get of a pod bound to it; list and watch with `fieldSelector=spec.nodeName=<name>` (or
//    of one pod bound to it); create and delete (mirror pods); update and patch of pods/status;
//    create of pods/eviction;
//  - secrets, configmaps: get, list and watch of single objects referenced by pods bound to it;
//    persistentvolumeclaims (get, and update/patch of their status), persistentvolumes (get) of
//    those pods, volume attachments attached to it, `serviceaccounts/token` of its pods' service
//    accounts (and, with KubeletServiceAccountTokenForCredentialProviders, get of those service
//    accounts); secrets referenced by those persistent volumes;
//  - leases in kube-node-lease named as the node; its CSINode;
//  - anything else through the static node rules (the system:node ClusterRole's rules).
//
// The graph of what references what is kept from pods, persistent volumes and volume attachments
// (the server feeds their change events), as kube-apiserver's graph populator keeps it.
import type { Attributes, UserInfo } from '../authz.js';
import type { FieldTerm } from '../../machinery/selectors.js';
import type { AuthorizationResult, ModeAuthorizer, RulesResult } from './authorizers.js';
import { rulesAllow, type PolicyRule } from './rules.js';
import type { ChangeType } from './resolver.js';
import { goQuote } from '../../machinery/gostrings.js';

export const NODES_GROUP = 'system:nodes';
export const NODE_USER_PREFIX = 'system:node:';
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** the node a user is, as kube-apiserver's default node identifier answers */
export function nodeIdentity(u: UserInfo | undefined): { isNode: boolean; nodeName: string } {
  if (!u || !u.name.startsWith(NODE_USER_PREFIX)) return { isNode: false, nodeName: '' };
  if (!u.groups.includes(NODES_GROUP)) return { isNode: false, nodeName: '' };
  return { isNode: true, nodeName: u.name.slice(NODE_USER_PREFIX.length) };
}

type VertexType = 'configmap' | 'pod' | 'pvc' | 'pv' | 'secret' | 'volumeattachment' | 'serviceAccount';

const key = (ns: string, name: string) => `${ns}/${name}`;

// ---- what a pod references ----

function forEachContainer(spec: any, f: (c: any) => void): void {
  for (const list of [spec?.initContainers, spec?.containers, spec?.ephemeralContainers]) {
    if (Array.isArray(list)) for (const c of list) if (c) f(c);
  }
}

/** the secrets a pod references (image pull secrets, env, envFrom, volumes) */
export function podSecretNames(pod: any): string[] {
  const out = new Set<string>();
  const add = (n: unknown) => {
    if (typeof n === 'string' && n) out.add(n);
  };
  const spec = pod?.spec ?? {};
  for (const s of spec.imagePullSecrets ?? []) add(s?.name);
  forEachContainer(spec, (c) => {
    for (const e of c.envFrom ?? []) add(e?.secretRef?.name);
    for (const e of c.env ?? []) add(e?.valueFrom?.secretKeyRef?.name);
  });
  for (const v of spec.volumes ?? []) {
    if (!v) continue;
    add(v.azureFile?.secretName);
    add(v.cephfs?.secretRef?.name);
    add(v.cinder?.secretRef?.name);
    add(v.flexVolume?.secretRef?.name);
    for (const p of v.projected?.sources ?? []) add(p?.secret?.name);
    add(v.rbd?.secretRef?.name);
    add(v.secret?.secretName);
    add(v.scaleIO?.secretRef?.name);
    add(v.iscsi?.secretRef?.name);
    add(v.storageos?.secretRef?.name);
    add(v.csi?.nodePublishSecretRef?.name);
  }
  return [...out];
}

/** the config maps a pod references (env, envFrom, volumes) */
export function podConfigMapNames(pod: any): string[] {
  const out = new Set<string>();
  const add = (n: unknown) => {
    if (typeof n === 'string' && n) out.add(n);
  };
  const spec = pod?.spec ?? {};
  forEachContainer(spec, (c) => {
    for (const e of c.envFrom ?? []) add(e?.configMapRef?.name);
    for (const e of c.env ?? []) add(e?.valueFrom?.configMapKeyRef?.name);
  });
  for (const v of spec.volumes ?? []) {
    add(v?.configMap?.name);
    for (const p of v?.projected?.sources ?? []) add(p?.configMap?.name);
  }
  return [...out];
}

/** the claims a pod uses (persistentVolumeClaim volumes, and `<pod>-<volume>` of ephemeral volumes) */
export function podClaimNames(pod: any): string[] {
  const out = new Set<string>();
  for (const v of pod?.spec?.volumes ?? []) {
    if (v?.persistentVolumeClaim?.claimName) out.add(v.persistentVolumeClaim.claimName);
    else if (v?.ephemeral && v.name) out.add(`${pod.metadata?.name ?? ''}-${v.name}`);
  }
  return [...out];
}

/** the secrets of a persistent volume the kubelet reads ([namespace, name]) */
export function pvSecretRefs(pv: any): [string, string][] {
  const out: [string, string][] = [];
  const spec = pv?.spec ?? {};
  const claimNs: string = spec.claimRef?.namespace ?? '';
  const ref = (r: any) => {
    if (r?.name) out.push([r.namespace || claimNs, r.name]);
  };
  if (spec.azureFile?.secretName) out.push([spec.azureFile.secretNamespace || claimNs || 'default', spec.azureFile.secretName]);
  ref(spec.cephfs?.secretRef);
  ref(spec.cinder?.secretRef);
  ref(spec.flexVolume?.secretRef);
  ref(spec.rbd?.secretRef);
  ref(spec.scaleIO?.secretRef);
  ref(spec.iscsi?.secretRef);
  ref(spec.storageos?.secretRef);
  if (spec.csi) {
    ref(spec.csi.nodePublishSecretRef);
    ref(spec.csi.nodeStageSecretRef);
    ref(spec.csi.nodeExpandSecretRef);
  }
  return out;
}

// ---- the graph ----

interface PodRecord {
  node: string;
  refs: string[]; // `${type}:${ns}/${name}`
}

/**
 * What each node may reach: pods bound to it, and through them secrets, config maps, claims and
 * service accounts; volumes through their claims; secrets through volumes; volume attachments.
 */
export class NodeGraph {
  private readonly pods = new Map<string, PodRecord>();
  /** `${type}:${ns}/${name}` -> node -> number of pods on that node referencing it */
  private readonly reach = new Map<string, Map<string, number>>();
  /** pv name -> its claim (`ns/name`) and its secrets (`ns/name`) */
  private readonly pvs = new Map<string, { claim: string; secrets: string[] }>();
  /** secret `ns/name` -> pvs referencing it */
  private readonly secretPVs = new Map<string, Set<string>>();
  private readonly attachments = new Map<string, string>();
  /** nodes that have a pod or a volume attachment (the graph's node vertices) */
  private readonly nodeRefs = new Map<string, number>();

  private bumpNode(node: string, d: number): void {
    const n = (this.nodeRefs.get(node) ?? 0) + d;
    if (n <= 0) this.nodeRefs.delete(node);
    else this.nodeRefs.set(node, n);
  }

  private bumpReach(ref: string, node: string, d: number): void {
    let m = this.reach.get(ref);
    if (!m) {
      if (d <= 0) return;
      this.reach.set(ref, (m = new Map()));
    }
    const n = (m.get(node) ?? 0) + d;
    if (n <= 0) m.delete(node);
    else m.set(node, n);
    if (m.size === 0) this.reach.delete(ref);
  }

  /** add or replace a pod (pods without spec.nodeName are not in the graph) */
  setPod(pod: any): void {
    const ns: string = pod?.metadata?.namespace ?? '';
    const name: string = pod?.metadata?.name ?? '';
    this.deletePod(ns, name);
    const node: string = pod?.spec?.nodeName ?? '';
    if (!name || !node) return;
    const refs: string[] = [];
    if (!Object.prototype.hasOwnProperty.call(pod.metadata?.annotations ?? {}, MIRROR_POD_ANNOTATION)) {
      if (pod.spec?.serviceAccountName) refs.push(`serviceAccount:${key(ns, pod.spec.serviceAccountName)}`);
      for (const s of podSecretNames(pod)) refs.push(`secret:${key(ns, s)}`);
      for (const c of podConfigMapNames(pod)) refs.push(`configmap:${key(ns, c)}`);
      for (const c of podClaimNames(pod)) refs.push(`pvc:${key(ns, c)}`);
    }
    refs.push(`pod:${key(ns, name)}`);
    this.pods.set(key(ns, name), { node, refs });
    for (const r of refs) this.bumpReach(r, node, 1);
    this.bumpNode(node, 1);
  }

  deletePod(namespace: string, name: string): void {
    const k = key(namespace, name);
    const p = this.pods.get(k);
    if (!p) return;
    this.pods.delete(k);
    for (const r of p.refs) this.bumpReach(r, p.node, -1);
    this.bumpNode(p.node, -1);
  }

  setPV(pv: any): void {
    const name: string = pv?.metadata?.name ?? '';
    this.deletePV(name);
    const claimRef = pv?.spec?.claimRef;
    if (!name || !claimRef?.name) return;
    const secrets = pvSecretRefs(pv).map(([ns, n]) => key(ns, n));
    this.pvs.set(name, { claim: key(claimRef.namespace ?? '', claimRef.name), secrets });
    for (const s of secrets) {
      let set = this.secretPVs.get(s);
      if (!set) this.secretPVs.set(s, (set = new Set()));
      set.add(name);
    }
  }

  deletePV(name: string): void {
    const p = this.pvs.get(name);
    if (!p) return;
    this.pvs.delete(name);
    for (const s of p.secrets) {
      const set = this.secretPVs.get(s);
      set?.delete(name);
      if (set && set.size === 0) this.secretPVs.delete(s);
    }
  }

  setVolumeAttachment(va: any): void {
    const name: string = va?.metadata?.name ?? '';
    this.deleteVolumeAttachment(name);
    const node: string = va?.spec?.nodeName ?? '';
    if (!name || !node) return;
    this.attachments.set(name, node);
    this.bumpNode(node, 1);
  }

  deleteVolumeAttachment(name: string): void {
    const node = this.attachments.get(name);
    if (node === undefined) return;
    this.attachments.delete(name);
    this.bumpNode(node, -1);
  }

  /** apply a watch event of pods, persistentvolumes or volumeattachments */
  onChange(resource: 'pods' | 'persistentvolumes' | 'volumeattachments', type: ChangeType, obj: any): void {
    const del = type === 'DELETED';
    switch (resource) {
      case 'pods':
        if (del) this.deletePod(obj?.metadata?.namespace ?? '', obj?.metadata?.name ?? '');
        else this.setPod(obj);
        return;
      case 'persistentvolumes':
        if (del) this.deletePV(obj?.metadata?.name ?? '');
        else this.setPV(obj);
        return;
      case 'volumeattachments':
        if (del) this.deleteVolumeAttachment(obj?.metadata?.name ?? '');
        else this.setVolumeAttachment(obj);
        return;
    }
  }

  /** replace all objects of one resource (initial list or relist) */
  replace(resource: 'pods' | 'persistentvolumes' | 'volumeattachments', objs: readonly any[]): void {
    switch (resource) {
      case 'pods':
        for (const k of [...this.pods.keys()]) {
          const i = k.indexOf('/');
          this.deletePod(k.slice(0, i), k.slice(i + 1));
        }
        for (const o of objs) this.setPod(o);
        return;
      case 'persistentvolumes':
        for (const n of [...this.pvs.keys()]) this.deletePV(n);
        for (const o of objs) this.setPV(o);
        return;
      case 'volumeattachments':
        for (const n of [...this.attachments.keys()]) this.deleteVolumeAttachment(n);
        for (const o of objs) this.setVolumeAttachment(o);
        return;
    }
  }

  knowsNode(node: string): boolean {
    return this.nodeRefs.has(node);
  }

  private reaches(ref: string, node: string): boolean {
    return (this.reach.get(ref)?.get(node) ?? 0) > 0;
  }

  /** is there a path from the object to the node? */
  hasPath(node: string, type: VertexType, namespace: string, name: string): boolean {
    if (!this.knowsNode(node)) return false;
    switch (type) {
      case 'pod':
      case 'configmap':
      case 'pvc':
      case 'serviceAccount':
        return this.reaches(`${type}:${key(namespace, name)}`, node);
      case 'secret': {
        if (this.reaches(`secret:${key(namespace, name)}`, node)) return true;
        for (const pv of this.secretPVs.get(key(namespace, name)) ?? []) if (this.pvReaches(pv, node)) return true;
        return false;
      }
      case 'pv':
        return this.pvReaches(name, node);
      case 'volumeattachment':
        return this.attachments.get(name) === node;
    }
  }

  private pvReaches(pv: string, node: string): boolean {
    const p = this.pvs.get(pv);
    return !!p && this.reaches(`pvc:${p.claim}`, node);
  }
}

// ---- the authorizer ----

function fieldRequires(terms: readonly FieldTerm[] | undefined, fieldName: string, value: string): boolean {
  for (const t of terms ?? []) if (t.field === fieldName && t.op === '=' && t.value === value) return true;
  return false;
}

const noOpinion = (reason = ''): AuthorizationResult => ({ decision: 'noOpinion', reason });
const allow = (): AuthorizationResult => ({ decision: 'allow', reason: '' });

export interface NodeAuthorizerOptions {
  /** the rules every node holds for what the graph does not subdivide (the system:node role's) */
  nodeRules: readonly PolicyRule[];
  /** AuthorizeNodeWithSelectors (on by default since 1.32): nodes and pods go through the graph and field selectors */
  withSelectors?: boolean;
  /**
   * KubeletServiceAccountTokenForCredentialProviders (off by default in 1.33): a node may get the
   * service accounts of its pods (the kubelet reads their annotations for its credential provider
   * plugins)
   */
  getServiceAccounts?: boolean;
}

export class NodeAuthorizer implements ModeAuthorizer {
  private readonly withSelectors: boolean;
  constructor(
    readonly graph: NodeGraph,
    private readonly opts: NodeAuthorizerOptions,
  ) {
    this.withSelectors = opts.withSelectors ?? true;
  }

  rulesFor(user: UserInfo): RulesResult {
    if (nodeIdentity(user).isNode) {
      return { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'node authorizer does not support user rule resolution' };
    }
    return { resourceRules: [], nonResourceRules: [], incomplete: false };
  }

  authorize(a: Attributes & { fieldSelector?: FieldTerm[] }): AuthorizationResult {
    const { isNode, nodeName } = nodeIdentity(a.user);
    if (!isNode) return noOpinion();
    if (!nodeName) return noOpinion(`unknown node for user ${goQuote(a.user.name)}`);
    if (a.resourceRequest) {
      const group = a.apiGroup ?? '';
      const res = a.resource ?? '';
      if (group === '') {
        switch (res) {
          case 'secrets':
            return this.readNamespaced(nodeName, 'secret', a);
          case 'configmaps':
            return this.readNamespaced(nodeName, 'configmap', a);
          case 'persistentvolumeclaims':
            if (a.subresource === 'status') return this.statusUpdate(nodeName, 'pvc', a);
            return this.get(nodeName, 'pvc', a);
          case 'persistentvolumes':
            return this.get(nodeName, 'pv', a);
          case 'serviceaccounts':
            if (this.opts.getServiceAccounts && a.verb === 'get' && !a.subresource) return this.readNamespaced(nodeName, 'serviceAccount', a);
            return this.createToken(nodeName, a);
          case 'nodes':
            if (this.withSelectors) return this.node(nodeName, a);
            break;
          case 'pods':
            if (this.withSelectors) return this.pod(nodeName, a);
            break;
        }
      } else if (group === 'storage.k8s.io') {
        if (res === 'volumeattachments') return this.get(nodeName, 'volumeattachment', a);
        if (res === 'csinodes') return this.csiNode(nodeName, a);
      } else if (group === 'coordination.k8s.io' && res === 'leases') {
        return this.lease(nodeName, a);
      }
    }
    return rulesAllow(a, this.opts.nodeRules) ? allow() : noOpinion();
  }

  private statusUpdate(node: string, type: VertexType, a: Attributes): AuthorizationResult {
    if (a.verb !== 'update' && a.verb !== 'patch') return noOpinion('can only get/update/patch this type');
    if (a.subresource !== 'status') return noOpinion('can only update status subresource');
    return this.related(node, type, a);
  }

  private get(node: string, type: VertexType, a: Attributes): AuthorizationResult {
    if (a.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (a.subresource) return noOpinion('cannot get subresource');
    return this.related(node, type, a);
  }

  private readNamespaced(node: string, type: VertexType, a: Attributes): AuthorizationResult {
    if (a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'watch') return noOpinion('can only read resources of this type');
    if (a.subresource) return noOpinion('cannot read subresource');
    if (!a.namespace) return noOpinion('can only read namespaced object of this type');
    return this.related(node, type, a);
  }

  private related(node: string, type: VertexType, a: Attributes): AuthorizationResult {
    if (!a.name) return noOpinion('No Object name found');
    if (!this.graph.hasPath(node, type, a.namespace ?? '', a.name)) return noOpinion(`no relationship found between node '${node}' and this object`);
    return allow();
  }

  private createToken(node: string, a: Attributes): AuthorizationResult {
    if (a.verb !== 'create' || !a.name) return noOpinion('can only create tokens for individual service accounts');
    if (a.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
    if (!this.graph.hasPath(node, 'serviceAccount', a.namespace ?? '', a.name)) return noOpinion(`no relationship found between node '${node}' and this object`);
    return allow();
  }

  private lease(node: string, a: Attributes): AuthorizationResult {
    const v = a.verb;
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(v)) return noOpinion('can only get, create, update, patch, or delete a node lease');
    if (a.namespace !== NODE_LEASE_NAMESPACE) return noOpinion(`can only access leases in the ${goQuote(NODE_LEASE_NAMESPACE)} system namespace`);
    if (v !== 'create' && a.name !== node) return noOpinion('can only access node lease with the same name as the requesting node');
    return allow();
  }

  private csiNode(node: string, a: Attributes): AuthorizationResult {
    const v = a.verb;
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(v)) return noOpinion('can only get, create, update, patch, or delete a CSINode');
    if (a.subresource) return noOpinion('cannot authorize CSINode subresources');
    if (v !== 'create' && a.name !== node) return noOpinion('can only access CSINode with the same name as the requesting node');
    return allow();
  }

  private node(node: string, a: Attributes): AuthorizationResult {
    const sub = a.subresource ?? '';
    if (sub === '') {
      switch (a.verb) {
        case 'create':
        case 'update':
        case 'patch':
          return allow();
        case 'get':
        case 'list':
        case 'watch':
          if (a.name === node) return allow();
          if (!a.name) return noOpinion(`node '${node}' cannot read all nodes, only its own Node object`);
          return noOpinion(`node '${node}' cannot read '${a.name}', only its own Node object`);
      }
    } else if (sub === 'status' && (a.verb === 'update' || a.verb === 'patch')) {
      return allow();
    }
    return noOpinion();
  }

  private pod(node: string, a: Attributes & { fieldSelector?: FieldTerm[] }): AuthorizationResult {
    const sub = a.subresource ?? '';
    if (sub === '') {
      switch (a.verb) {
        case 'get':
          return this.get(node, 'pod', a);
        case 'list':
        case 'watch':
          if (fieldRequires(a.fieldSelector, 'spec.nodeName', node)) return allow();
          if (a.name) return this.related(node, 'pod', a);
          return noOpinion('can only list/watch pods with spec.nodeName field selector');
        case 'create':
        case 'delete':
          return allow();
      }
    } else if (sub === 'status') {
      if (a.verb === 'update' || a.verb === 'patch') return allow();
    } else if (sub === 'eviction') {
      if (a.verb === 'create') return allow();
    }
    return noOpinion();
  }
}
