// kube-scheduler's VolumeBinding plugin (pkg/scheduler/framework/plugins/volumebinding), its pure
// half: what it decides about a pod's PersistentVolumeClaims and one node, from the claims, volumes
// and StorageClasses the scheduler's informers hold. The API writes of its PreBind (the PV's
// claimRef for a static binding, the claim's selected-node annotation for a provisioning) and the
// wait for the PV controller to finish the binding are in scheduler.ts.
//
//   PreFilter  a pod without claims skips the plugin. A claim that does not exist
//              (`persistentvolumeclaim "x" not found`), is Lost or is being deleted rejects the pod
//              on every node (UnschedulableAndUnresolvable); so does a claim not fully bound
//              (spec.volumeName and the annotation pv.kubernetes.io/bind-completed, which the PV
//              controller sets) whose StorageClass binds Immediate, or that has no class, or is
//              pre-bound (`pod has unbound immediate PersistentVolumeClaims`). The bound claims'
//              PVs whose node affinity names kubernetes.io/hostname values narrow the nodes
//              (GetEligibleNodes).
//   Filter     (after NodeResourcesFit) a bound claim's PV must exist (`node(s) unavailable due to
//              one or more pvc(s) bound to non-existent pv(s)`) and its node affinity match the
//              node (`node(s) had volume node affinity conflict`); an unbound claim of a
//              WaitForFirstConsumer class either finds an Available PV of its class that fits
//              (capacity, volume mode, access modes, selector, node affinity; the smallest), or
//              must be provisionable there (a class with a provisioner other than
//              kubernetes.io/no-provisioner, whose allowedTopologies the node matches), else
//              `node(s) didn't find available persistent volumes to bind`; a claim that already
//              has a selected node fits that node only.
//   PreBind    see scheduler.ts.
// Not done: CSI migration and CSIStorageCapacity (capacity is not checked: ErrReasonNotEnoughSpace
// never happens), the assume cache (a second pod of the same claim scheduled before the first's
// binding is written does not see it), generic ephemeral volumes beyond their claim's existence
// and ownership, VolumeBinding's scoring (StorageCapacityScoring, alpha).
import {
  ANN_BIND_COMPLETED,
  ANN_SELECTED_NODE,
  NOT_SUPPORTED_PROVISIONER,
  claimClass,
  claimStorageRequest,
  findMatchingVolume as findVolume,
  volumeClass,
} from '../schema/pvmatch.js';
import { matchNodeSelectorTerm, type Status } from './framework.js';

export const ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind";
export const ERR_NODE_CONFLICT = 'node(s) had volume node affinity conflict';
export const ERR_NOT_ENOUGH_SPACE = 'node(s) did not have enough free storage';
export const ERR_PV_NOT_EXIST = 'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)';
export const ERR_UNBOUND_IMMEDIATE = 'pod has unbound immediate PersistentVolumeClaims';
// (the binding annotations and the volume matching are shared with the PV controller: schema/pvmatch.ts)
export { ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE } from '../schema/pvmatch.js';
const LABEL_HOSTNAME = 'kubernetes.io/hostname';
/** VolumeBindingArgs.bindTimeoutSeconds' default */
export const DEFAULT_BIND_TIMEOUT_SECONDS = 600;

/** the scheduler's listers of what the plugin reads */
export interface VolumeListers {
  pvc(namespace: string, name: string): any | undefined;
  pv(name: string): any | undefined;
  storageClass(name: string): any | undefined;
  pvs(): readonly any[];
}

/** the plugin's cycle state (stateData) */
export interface VolumeState {
  boundClaims: any[];
  /** unbound claims of WaitForFirstConsumer classes */
  delayClaims: any[];
  /** the PVs of each class the delay claims ask for */
  classPVs: Map<string, any[]>;
}

/** one node's answer for the delay claims: what PreBind would write there */
export interface PodVolumes {
  staticBindings: { pv: any; pvc: any }[];
  dynamicProvisions: any[];
}

const arr = <T = any>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
const status = (code: Status['code'], ...reasons: string[]): Status => ({ code, reasons, plugin: 'VolumeBinding' });

/** the claim's volumes, by pod volume name: persistentVolumeClaim ones, and generic ephemeral ones (<pod>-<volume>) */
export function podClaims(pod: any): { volume: string; claim: string; ephemeral: boolean }[] {
  const out: { volume: string; claim: string; ephemeral: boolean }[] = [];
  for (const v of arr(pod?.spec?.volumes)) {
    if (v?.persistentVolumeClaim) out.push({ volume: String(v.name), claim: String(v.persistentVolumeClaim.claimName ?? ''), ephemeral: false });
    else if (v?.ephemeral) out.push({ volume: String(v.name), claim: `${pod?.metadata?.name ?? ''}-${v.name}`, ephemeral: true });
  }
  return out;
}

export function podHasClaims(pod: any): boolean {
  return podClaims(pod).length > 0;
}

/** isPVCFullyBound */
export function claimFullyBound(pvc: any): boolean {
  return !!pvc?.spec?.volumeName && Object.prototype.hasOwnProperty.call(pvc?.metadata?.annotations ?? {}, ANN_BIND_COMPLETED);
}

/** IsDelayBindingMode: the claim's class exists and binds WaitForFirstConsumer */
export function isDelayBinding(pvc: any, l: VolumeListers): boolean {
  const name = claimClass(pvc);
  if (!name) return false;
  const sc = l.storageClass(name);
  return sc?.volumeBindingMode === 'WaitForFirstConsumer';
}

/** CheckNodeAffinity: the PV's required node affinity against the node's labels (a node of labels only, as Kubernetes builds it) */
export function pvMatchesNode(pv: any, node: any): boolean {
  const required = pv?.spec?.nodeAffinity?.required;
  if (!required) return true;
  const labelsOnly = { metadata: { labels: node?.metadata?.labels ?? {} } };
  return arr(required.nodeSelectorTerms).some((t) => matchNodeSelectorTerm(t, labelsOnly));
}

/** GetLocalPersistentVolumeNodeNames: the kubernetes.io/hostname In values of each term, the terms' union */
export function localVolumeNodeNames(pv: any): string[] {
  const terms = arr(pv?.spec?.nodeAffinity?.required?.nodeSelectorTerms);
  const result = new Set<string>();
  for (const t of terms) {
    let nodes: Set<string> | undefined;
    for (const e of arr(t?.matchExpressions)) {
      if (e?.key !== LABEL_HOSTNAME || e?.operator !== 'In') continue;
      const vals = new Set(arr<string>(e.values).map(String));
      nodes = nodes === undefined ? vals : new Set([...nodes].filter((n) => vals.has(n)));
    }
    for (const n of nodes ?? []) result.add(n);
  }
  return [...result].sort();
}

/**
 * PreFilter: skip (no claims), a rejection of every node, or the state and the nodes the bound
 * local volumes allow (undefined: all)
 */
export function volumeBindingPreFilter(pod: any, l: VolumeListers): { skip: true } | { status: Status } | { state: VolumeState; eligibleNodes?: Set<string> } {
  const claims = podClaims(pod);
  if (!claims.length) return { skip: true };
  const ns = String(pod?.metadata?.namespace ?? '');
  const pvcs: any[] = [];
  // podHasPVCs
  for (const c of claims) {
    const pvc = l.pvc(ns, c.claim);
    if (!pvc) {
      const msg = c.ephemeral ? `waiting for ephemeral volume controller to create the persistentvolumeclaim ${JSON.stringify(c.claim)}` : `persistentvolumeclaim ${JSON.stringify(c.claim)} not found`;
      return { status: status('UnschedulableAndUnresolvable', msg) };
    }
    if (pvc.status?.phase === 'Lost') return { status: status('UnschedulableAndUnresolvable', `persistentvolumeclaim ${JSON.stringify(c.claim)} bound to non-existent persistentvolume ${JSON.stringify(String(pvc.spec?.volumeName ?? ''))}`) };
    if (pvc.metadata?.deletionTimestamp) return { status: status('UnschedulableAndUnresolvable', `persistentvolumeclaim ${JSON.stringify(c.claim)} is being deleted`) };
    if (c.ephemeral && !arr(pvc.metadata?.ownerReferences).some((r: any) => r?.controller === true && r?.uid === pod?.metadata?.uid)) {
      return { status: status('UnschedulableAndUnresolvable', `PVC ${ns}/${c.claim} was not created for pod ${ns}/${pod?.metadata?.name ?? ''} (pod is not owner)`) };
    }
    pvcs.push(pvc);
  }
  // GetPodVolumeClaims
  const boundClaims: any[] = [];
  const delayClaims: any[] = [];
  let immediate = 0;
  for (const pvc of pvcs) {
    if (claimFullyBound(pvc)) boundClaims.push(pvc);
    else if (isDelayBinding(pvc, l) && !pvc.spec?.volumeName) delayClaims.push(pvc);
    else immediate++;
  }
  if (immediate) return { status: status('UnschedulableAndUnresolvable', ERR_UNBOUND_IMMEDIATE) };
  const classPVs = new Map<string, any[]>();
  for (const pvc of delayClaims) {
    const cls = claimClass(pvc);
    if (!classPVs.has(cls)) classPVs.set(cls, l.pvs().filter((pv) => volumeClass(pv) === cls));
  }
  // GetEligibleNodes
  let eligible: Set<string> | undefined;
  let missing = false;
  for (const pvc of boundClaims) {
    const pv = l.pv(String(pvc.spec.volumeName));
    if (!pv) {
      missing = true;
      continue;
    }
    const names = localVolumeNodeNames(pv);
    if (!names.length) continue;
    eligible = eligible === undefined ? new Set(names) : new Set([...eligible].filter((n) => names.includes(n)));
  }
  return { state: { boundClaims, delayClaims, classPVs }, eligibleNodes: missing ? undefined : eligible };
}

/**
 * FindMatchingVolume on the scheduler's path (the node given: its node affinity and the access
 * modes are checked): the pre-bound PV, else the smallest Available PV that fits the claim and the
 * node; none for a claim whose selector is invalid
 */
export function findMatchingVolume(pvc: any, pvs: readonly any[], node: any, excluded: ReadonlySet<string>): any | undefined {
  try {
    return findVolume(pvc, pvs, (pv) => pvMatchesNode(pv, node), excluded, false);
  } catch {
    return undefined;
  }
}

/** MatchTopologySelectorTerms: no terms match every node; otherwise some term's every expression */
function matchTopology(terms: unknown, node: any): boolean {
  const list = arr(terms);
  if (!list.length) return true;
  const labels: Record<string, string> = node?.metadata?.labels ?? {};
  return list.some((t: any) =>
    arr(t?.matchLabelExpressions).every((e: any) => Object.prototype.hasOwnProperty.call(labels, e?.key) && arr<string>(e?.values).map(String).includes(labels[e.key]!)),
  );
}

/** Filter (FindPodVolumes): undefined when the node fits, with what PreBind would do there */
export function volumeBindingFilter(state: VolumeState, node: any, l: VolumeListers): { status?: Status; volumes?: PodVolumes } {
  const nodeName = String(node?.metadata?.name ?? '');
  let boundSatisfied = true;
  let pvsFound = true;
  let unboundSatisfied = true;
  const volumes: PodVolumes = { staticBindings: [], dynamicProvisions: [] };
  for (const pvc of state.boundClaims) {
    const pv = l.pv(String(pvc.spec.volumeName));
    if (!pv) {
      pvsFound = false;
      break;
    }
    if (!pvMatchesNode(pv, node)) {
      boundSatisfied = false;
      break;
    }
  }
  if (state.delayClaims.length) {
    const toProvision: any[] = [];
    const toMatch: any[] = [];
    let fast = false;
    for (const pvc of state.delayClaims) {
      const selected = pvc.metadata?.annotations?.[ANN_SELECTED_NODE];
      if (typeof selected === 'string') {
        if (selected !== nodeName) {
          unboundSatisfied = false;
          fast = true;
          break;
        }
        toProvision.push(pvc);
      } else toMatch.push(pvc);
    }
    if (!fast) {
      if (toMatch.length) {
        // smallest requests first, so that they get the smallest volumes
        toMatch.sort((a, b) => {
          const d = claimStorageRequest(a) - claimStorageRequest(b);
          return d < 0n ? -1 : d > 0n ? 1 : 0;
        });
        const chosen = new Set<string>();
        for (const pvc of toMatch) {
          const pv = findMatchingVolume(pvc, state.classPVs.get(claimClass(pvc)) ?? [], node, chosen);
          if (!pv) {
            unboundSatisfied = false;
            toProvision.push(pvc);
            continue;
          }
          chosen.add(String(pv.metadata.name));
          volumes.staticBindings.push({ pv, pvc });
        }
      }
      if (toProvision.length) {
        // checkVolumeProvisions
        unboundSatisfied = true;
        for (const pvc of toProvision) {
          const sc = l.storageClass(claimClass(pvc));
          const provisioner = String(sc?.provisioner ?? '');
          if (!sc || !provisioner || provisioner === NOT_SUPPORTED_PROVISIONER || !matchTopology(sc.allowedTopologies, node)) {
            unboundSatisfied = false;
            volumes.dynamicProvisions = [];
            break;
          }
          volumes.dynamicProvisions.push(pvc);
        }
      }
    }
  }
  const reasons: string[] = [];
  if (!boundSatisfied) reasons.push(ERR_NODE_CONFLICT);
  if (!unboundSatisfied) reasons.push(ERR_BIND_CONFLICT);
  if (!pvsFound) reasons.push(ERR_PV_NOT_EXIST);
  if (reasons.length) return { status: status('UnschedulableAndUnresolvable', ...reasons) };
  return { volumes };
}
