// The two default plugins that look at the pods of every node, not only the candidate's:
// InterPodAffinity (spec.affinity.podAffinity and podAntiAffinity, the incoming pod's and, for
// symmetry, the existing pods') and PodTopologySpread (spec.topologySpreadConstraints, and the
// system default constraints for pods that a Service, ReplicationController, ReplicaSet or
// StatefulSet selects), as kube-scheduler 1.33's plugins decide, with no I/O.
//
// The pods are those bound to a node and not terminated (ClusterPods), as one scheduling pass
// listed them, plus the pass's own bindings. What is computed once per pod (the PreFilter and
// PreScore states) is computed over every node; the filters and scores then read it per node.
//
// InterPodAffinity
//   filter, in this order (the first failure):
//     required podAffinity: on a node that has every term's topologyKey, some pod matching every
//       term must be in the node's domain of each term; when no pod anywhere matches and the pod
//       matches its own terms, any node with the keys will do (the first of a group)
//       -> "node(s) didn't match pod affinity rules" (UnschedulableAndUnresolvable)
//     required podAntiAffinity: no pod matching a term in the node's domain of that term
//       -> "node(s) didn't match pod anti-affinity rules" (Unschedulable)
//     existing pods' required podAntiAffinity whose terms match the incoming pod: not in their domain
//       -> "node(s) didn't satisfy existing pods anti-affinity rules" (Unschedulable)
//   score (weight 2): per topology domain, the weights of the incoming pod's preferred terms that
//     existing pods match (anti-affinity negative), and of the existing pods' preferred terms, and
//     1 (hardPodAffinityWeight) for their required affinity terms, that the incoming pod matches;
//     a node scores the sum over its domains, normalized from the lowest to the highest onto 0..100.
//   A term's namespaces: its `namespaces`, or those its namespaceSelector selects, or (neither
//   given) the pod's own; a missing labelSelector matches nothing. matchLabelKeys and
//   mismatchLabelKeys are already in the selector as `key in (value)` and `key notin (value)`:
//   the API server writes them there when the pod is created, as Kubernetes 1.33's does.
//
// PodTopologySpread
//   filter (constraints DoNotSchedule): a node without a constraint's topologyKey is refused
//     ("... (missing required label)", UnschedulableAndUnresolvable); otherwise the matching pods
//     of the incoming pod's namespace (not being deleted) in the node's domain, plus 1 when the pod
//     matches its own selector, minus the fewest in any eligible domain (0 when there are fewer
//     domains than minDomains), must not exceed maxSkew ("node(s) didn't match pod topology spread
//     constraints", Unschedulable). Eligible domains are those of nodes with every constraint's key
//     that pass nodeAffinityPolicy (Honor by default: the pod's node selector and required node
//     affinity) and nodeTaintsPolicy (Ignore by default).
//   score (weight 2, constraints ScheduleAnyway, or without any constraint the system defaults:
//     hostname maxSkew 3 and zone maxSkew 5 over the pods of the same Services and controller):
//     per constraint, count * log(domains + 2) + maxSkew - 1; fewer is better, normalized as
//     kube-scheduler does (nodes without the keys score 0).
import { fromLabelSelector, matchLabels, type Requirement } from '../machinery/selectors.js';
import { matchesRequiredNodeAffinity, MAX_NODE_SCORE, type Code, type Status, tolerationsTolerateTaint } from './framework.js';

export const ERR_AFFINITY_RULES = "node(s) didn't match pod affinity rules";
export const ERR_ANTI_AFFINITY_RULES = "node(s) didn't match pod anti-affinity rules";
export const ERR_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules";
export const ERR_SPREAD = "node(s) didn't match pod topology spread constraints";
export const ERR_SPREAD_LABEL = `${ERR_SPREAD} (missing required label)`;

export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';
/** InterPodAffinityArgs.hardPodAffinityWeight's default */
const HARD_POD_AFFINITY_WEIGHT = 1;

const isObject = (v: unknown): v is Record<string, any> => v !== null && typeof v === 'object' && !Array.isArray(v);
const arr = <T = any>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
const labelsOf = (o: any): Record<string, string> => (isObject(o?.metadata?.labels) ? o.metadata.labels : {});
const has = (o: Record<string, string>, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);
const status = (plugin: string, code: Code, reason: string): Status => ({ code, reasons: [reason], plugin });

// ── terms ───────────────────────────────────────────────────────────────────

export interface AffinityTerm {
  /** null: matches no pod */
  selector: Requirement[] | null;
  namespaces: ReadonlySet<string>;
  /** null: no namespace selector */
  namespaceSelector: Requirement[] | null;
  topologyKey: string;
}

export interface WeightedTerm {
  term: AffinityTerm;
  weight: number;
}

/** a pod's pod (anti-)affinity terms, compiled */
export interface PodTerms {
  required: AffinityTerm[];
  requiredAnti: AffinityTerm[];
  preferred: WeightedTerm[];
  preferredAnti: WeightedTerm[];
}

/** an unparsable selector selects nothing (the API server's validation keeps such terms out) */
function selectorOrNothing(sel: unknown): Requirement[] | null {
  try {
    return fromLabelSelector(isObject(sel) ? (sel as any) : null);
  } catch {
    return null;
  }
}

function compileTerm(pod: any, t: any): AffinityTerm {
  const ns = String(pod?.metadata?.namespace ?? '');
  // (matchLabelKeys and mismatchLabelKeys are in the selector already: the API server merges them at creation)
  const selector = selectorOrNothing(t?.labelSelector);
  const names = arr<string>(t?.namespaces).map(String);
  const nsSel = isObject(t?.namespaceSelector) ? selectorOrNothing(t.namespaceSelector) : null;
  const namespaces = new Set(names.length === 0 && !isObject(t?.namespaceSelector) ? [ns] : names);
  return { selector, namespaces, namespaceSelector: nsSel, topologyKey: String(t?.topologyKey ?? '') };
}

/** the pod's compiled pod (anti-)affinity terms; undefined when it has none */
export function podTerms(pod: any): PodTerms | undefined {
  const a = pod?.spec?.affinity;
  const pa = a?.podAffinity;
  const paa = a?.podAntiAffinity;
  if (!isObject(pa) && !isObject(paa)) return undefined;
  const weighted = (list: unknown): WeightedTerm[] =>
    arr(list)
      .filter((w) => Number(w?.weight ?? 0) !== 0)
      .map((w) => ({ weight: Number(w.weight), term: compileTerm(pod, w?.podAffinityTerm) }));
  const out: PodTerms = {
    required: arr(pa?.requiredDuringSchedulingIgnoredDuringExecution).map((t) => compileTerm(pod, t)),
    requiredAnti: arr(paa?.requiredDuringSchedulingIgnoredDuringExecution).map((t) => compileTerm(pod, t)),
    preferred: weighted(pa?.preferredDuringSchedulingIgnoredDuringExecution),
    preferredAnti: weighted(paa?.preferredDuringSchedulingIgnoredDuringExecution),
  };
  return out.required.length || out.requiredAnti.length || out.preferred.length || out.preferredAnti.length ? out : undefined;
}

// ── the pods of the cluster ─────────────────────────────────────────────────

/** what the two plugins read of a pod on a node */
export interface PlacedPod {
  uid: string;
  namespace: string;
  name: string;
  labels: Record<string, string>;
  nodeName: string;
  /** metadata.deletionTimestamp is set */
  terminating: boolean;
  terms?: PodTerms;
}

export function placedPod(pod: any, nodeName = String(pod?.spec?.nodeName ?? '')): PlacedPod {
  const p: PlacedPod = {
    uid: String(pod?.metadata?.uid ?? ''),
    namespace: String(pod?.metadata?.namespace ?? ''),
    name: String(pod?.metadata?.name ?? ''),
    labels: labelsOf(pod),
    nodeName,
    terminating: !!pod?.metadata?.deletionTimestamp,
  };
  const t = podTerms(pod);
  if (t) p.terms = t;
  return p;
}

/** what the plugins read of the cluster's pods: ClusterPods, or a view of it without some pods (preemption's trials) */
export interface PodsView {
  podsOn(node: string): readonly PlacedPod[];
  namespaceLabels(ns: string): Record<string, string>;
  /** how many pods have pod (anti-)affinity terms (0: InterPodAffinity has nothing to score) */
  readonly withTerms: number;
}

/** the bound, not terminated pods by node, and the namespaces' labels */
export class ClusterPods implements PodsView {
  private readonly byNode = new Map<string, PlacedPod[]>();
  private readonly nsLabels: Map<string, Record<string, string>>;
  /** how many pods have pod (anti-)affinity terms */
  withTerms = 0;

  constructor(pods: readonly PlacedPod[] = [], namespaces: readonly any[] = []) {
    this.nsLabels = new Map(namespaces.map((n) => [String(n?.metadata?.name ?? ''), labelsOf(n)]));
    for (const p of pods) this.add(p);
  }

  add(p: PlacedPod): void {
    let l = this.byNode.get(p.nodeName);
    if (!l) this.byNode.set(p.nodeName, (l = []));
    if (l.some((x) => x.uid === p.uid)) return;
    l.push(p);
    if (p.terms) this.withTerms++;
  }

  podsOn(node: string): readonly PlacedPod[] {
    return this.byNode.get(node) ?? [];
  }

  /** the pod of `uid` on `node` */
  find(node: string, uid: string): PlacedPod | undefined {
    return this.podsOn(node).find((p) => p.uid === uid);
  }

  namespaceLabels(ns: string): Record<string, string> {
    return this.nsLabels.get(ns) ?? {};
  }

  /** the pods of `node` without those of `uids` (the others' nodes as they are) */
  without(node: string, uids: ReadonlySet<string>): PodsView {
    const kept = this.podsOn(node).filter((p) => !uids.has(p.uid));
    return {
      podsOn: (n) => (n === node ? kept : this.podsOn(n)),
      namespaceLabels: (ns) => this.namespaceLabels(ns),
      withTerms: this.withTerms,
    };
  }
}

/** AffinityTerm.Matches: the pod's namespace is one of the term's (or its labels match the selector), and its labels match */
export function termMatches(t: AffinityTerm, p: { namespace: string; labels: Record<string, string> }, cluster: PodsView): boolean {
  if (!t.namespaces.has(p.namespace) && !(t.namespaceSelector !== null && matchLabels(t.namespaceSelector, cluster.namespaceLabels(p.namespace)))) return false;
  return t.selector !== null && matchLabels(t.selector, p.labels);
}

const pairKey = (key: string, value: string): string => `${key}\u0000${value}`;

function bump(m: Map<string, number>, key: string, by: number): void {
  m.set(key, (m.get(key) ?? 0) + by);
}

// ── InterPodAffinity ────────────────────────────────────────────────────────

export interface InterPodFilterState {
  terms?: PodTerms;
  /** topology pairs -> existing pods whose required anti-affinity matches the incoming pod */
  existingAnti: Map<string, number>;
  /** topology pairs -> existing pods matching every required affinity term */
  affinity: Map<string, number>;
  /** topology pairs -> existing pods matching a required anti-affinity term */
  anti: Map<string, number>;
}

/** InterPodAffinity's PreFilter over every node */
export function interPodPreFilter(pod: any, nodes: readonly any[], cluster: PodsView): InterPodFilterState {
  const self = { namespace: String(pod?.metadata?.namespace ?? ''), labels: labelsOf(pod) };
  const terms = podTerms(pod);
  const s: InterPodFilterState = { terms, existingAnti: new Map(), affinity: new Map(), anti: new Map() };
  for (const node of nodes) {
    const labels = labelsOf(node);
    for (const e of cluster.podsOn(String(node?.metadata?.name ?? ''))) {
      for (const t of e.terms?.requiredAnti ?? []) {
        if (has(labels, t.topologyKey) && termMatches(t, self, cluster)) bump(s.existingAnti, pairKey(t.topologyKey, labels[t.topologyKey]!), 1);
      }
      if (!terms) continue;
      if (terms.required.length && terms.required.every((t) => termMatches(t, e, cluster))) {
        for (const t of terms.required) if (has(labels, t.topologyKey)) bump(s.affinity, pairKey(t.topologyKey, labels[t.topologyKey]!), 1);
      }
      for (const t of terms.requiredAnti) {
        if (has(labels, t.topologyKey) && termMatches(t, e, cluster)) bump(s.anti, pairKey(t.topologyKey, labels[t.topologyKey]!), 1);
      }
    }
  }
  return s;
}

/** InterPodAffinity's Filter on one node */
export function filterInterPodAffinity(pod: any, node: any, s: InterPodFilterState, cluster: PodsView): Status | undefined {
  const labels = labelsOf(node);
  const terms = s.terms;
  if (terms?.required.length) {
    let exist = true;
    for (const t of terms.required) {
      if (!has(labels, t.topologyKey)) return status('InterPodAffinity', 'UnschedulableAndUnresolvable', ERR_AFFINITY_RULES);
      if (!((s.affinity.get(pairKey(t.topologyKey, labels[t.topologyKey]!)) ?? 0) > 0)) exist = false;
    }
    if (!exist) {
      // (the first of a group of pods with affinity to each other)
      const self = { namespace: String(pod?.metadata?.namespace ?? ''), labels: labelsOf(pod) };
      if (!(s.affinity.size === 0 && terms.required.every((t) => termMatches(t, self, cluster)))) return status('InterPodAffinity', 'UnschedulableAndUnresolvable', ERR_AFFINITY_RULES);
    }
  }
  for (const t of terms?.requiredAnti ?? []) {
    if (has(labels, t.topologyKey) && (s.anti.get(pairKey(t.topologyKey, labels[t.topologyKey]!)) ?? 0) > 0) return status('InterPodAffinity', 'Unschedulable', ERR_ANTI_AFFINITY_RULES);
  }
  if (s.existingAnti.size) {
    for (const k of Object.keys(labels)) if ((s.existingAnti.get(pairKey(k, labels[k]!)) ?? 0) > 0) return status('InterPodAffinity', 'Unschedulable', ERR_EXISTING_ANTI_AFFINITY);
  }
  return undefined;
}

/** InterPodAffinity's PreScore: topologyKey -> value -> score; undefined when it has nothing to say (Skip) */
export function interPodPreScore(pod: any, nodes: readonly any[], cluster: PodsView): Map<string, Map<string, number>> | undefined {
  const terms = podTerms(pod);
  const incoming = !!(terms && (terms.preferred.length || terms.preferredAnti.length));
  if (!incoming && cluster.withTerms === 0) return undefined;
  const self = { namespace: String(pod?.metadata?.namespace ?? ''), labels: labelsOf(pod) };
  const scores = new Map<string, Map<string, number>>();
  const add = (t: AffinityTerm, labels: Record<string, string>, w: number) => {
    if (!has(labels, t.topologyKey)) return;
    let m = scores.get(t.topologyKey);
    if (!m) scores.set(t.topologyKey, (m = new Map()));
    m.set(labels[t.topologyKey]!, (m.get(labels[t.topologyKey]!) ?? 0) + w);
  };
  for (const node of nodes) {
    const labels = labelsOf(node);
    if (Object.keys(labels).length === 0) continue;
    for (const e of cluster.podsOn(String(node?.metadata?.name ?? ''))) {
      if (!incoming && !e.terms) continue;
      if (terms) {
        for (const w of terms.preferred) if (termMatches(w.term, e, cluster)) add(w.term, labels, w.weight);
        for (const w of terms.preferredAnti) if (termMatches(w.term, e, cluster)) add(w.term, labels, -w.weight);
      }
      if (!e.terms) continue;
      for (const t of e.terms.required) if (termMatches(t, self, cluster)) add(t, labels, HARD_POD_AFFINITY_WEIGHT);
      for (const w of e.terms.preferred) if (termMatches(w.term, self, cluster)) add(w.term, labels, w.weight);
      for (const w of e.terms.preferredAnti) if (termMatches(w.term, self, cluster)) add(w.term, labels, -w.weight);
    }
  }
  return scores;
}

/** InterPodAffinity's Score and NormalizeScore over the feasible nodes, in their order */
export function scoreInterPodAffinity(nodes: readonly any[], pre: Map<string, Map<string, number>>): number[] {
  const raw = nodes.map((n) => {
    const labels = labelsOf(n);
    let s = 0;
    for (const [key, byValue] of pre) if (has(labels, key)) s += byValue.get(labels[key]!) ?? 0;
    return s;
  });
  let min = Infinity;
  let max = -Infinity;
  for (const s of raw) {
    if (s > max) max = s;
    if (s < min) min = s;
  }
  const diff = max - min;
  return raw.map((s) => (diff > 0 ? Math.trunc(MAX_NODE_SCORE * ((s - min) / diff)) : 0));
}

// ── PodTopologySpread ───────────────────────────────────────────────────────

export interface SpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  selector: Requirement[] | null;
  minDomains: number;
  honorNodeAffinity: boolean;
  honorTaints: boolean;
}

/** filterTopologySpreadConstraints: the pod's constraints of one whenUnsatisfiable, their selectors with matchLabelKeys */
export function spreadConstraints(pod: any, when: 'DoNotSchedule' | 'ScheduleAnyway'): SpreadConstraint[] {
  const own = labelsOf(pod);
  const out: SpreadConstraint[] = [];
  for (const c of arr(pod?.spec?.topologySpreadConstraints)) {
    if (c?.whenUnsatisfiable !== when) continue;
    let selector = selectorOrNothing(c?.labelSelector);
    if (selector) {
      const extra: Requirement[] = [];
      for (const k of arr<string>(c?.matchLabelKeys)) if (has(own, k)) extra.push({ key: k, op: 'in', values: [own[k]!] });
      if (extra.length) selector = [...selector, ...extra];
    }
    out.push({
      maxSkew: Number(c?.maxSkew ?? 1),
      topologyKey: String(c?.topologyKey ?? ''),
      selector,
      minDomains: Number(c?.minDomains ?? 1),
      honorNodeAffinity: (c?.nodeAffinityPolicy ?? 'Honor') === 'Honor',
      honorTaints: c?.nodeTaintsPolicy === 'Honor',
    });
  }
  return out;
}

/**
 * The system default constraints (PodTopologySpreadArgs defaultingType System), over `selector`:
 * what DefaultSelector makes of the Services selecting the pod and its controller's selector;
 * none when that selector is empty.
 */
export function defaultSpreadConstraints(selector: Requirement[]): SpreadConstraint[] {
  if (!selector.length) return [];
  const base = { selector, minDomains: 1, honorNodeAffinity: true, honorTaints: false };
  return [
    { ...base, maxSkew: 3, topologyKey: LABEL_HOSTNAME },
    { ...base, maxSkew: 5, topologyKey: LABEL_ZONE },
  ];
}

function hasAllKeys(labels: Record<string, string>, cs: readonly SpreadConstraint[]): boolean {
  return cs.every((c) => has(labels, c.topologyKey));
}

/** matchNodeInclusionPolicies */
function includes(c: SpreadConstraint, pod: any, node: any): boolean {
  if (c.honorNodeAffinity && !matchesRequiredNodeAffinity(pod, node)) return false;
  if (c.honorTaints) {
    const tolerations = arr(pod?.spec?.tolerations);
    for (const taint of arr(node?.spec?.taints)) {
      if ((taint?.effect === 'NoSchedule' || taint?.effect === 'NoExecute') && !tolerationsTolerateTaint(tolerations, taint)) return false;
    }
  }
  return true;
}

/** countPodsMatchSelector: the pods of the namespace, not being deleted, that the selector matches */
function countMatching(pods: readonly PlacedPod[], selector: Requirement[] | null, ns: string): number {
  if (selector === null) return 0;
  let n = 0;
  for (const p of pods) if (!p.terminating && p.namespace === ns && matchLabels(selector, p.labels)) n++;
  return n;
}

export interface SpreadFilterState {
  constraints: SpreadConstraint[];
  /** per constraint: topology value -> matching pods */
  counts: Map<string, number>[];
}

/** PodTopologySpread's PreFilter over every node (DoNotSchedule constraints) */
export function spreadPreFilter(pod: any, nodes: readonly any[], cluster: PodsView): SpreadFilterState {
  const constraints = spreadConstraints(pod, 'DoNotSchedule');
  const counts = constraints.map(() => new Map<string, number>());
  if (!constraints.length) return { constraints, counts };
  const ns = String(pod?.metadata?.namespace ?? '');
  for (const node of nodes) {
    const labels = labelsOf(node);
    if (!hasAllKeys(labels, constraints)) continue;
    const pods = cluster.podsOn(String(node?.metadata?.name ?? ''));
    constraints.forEach((c, i) => {
      if (!includes(c, pod, node)) return;
      bump(counts[i]!, labels[c.topologyKey]!, countMatching(pods, c.selector, ns));
    });
  }
  return { constraints, counts };
}

/** PodTopologySpread's Filter on one node */
export function filterPodTopologySpread(pod: any, node: any, s: SpreadFilterState): Status | undefined {
  if (!s.constraints.length) return undefined;
  const labels = labelsOf(node);
  const own = labelsOf(pod);
  for (let i = 0; i < s.constraints.length; i++) {
    const c = s.constraints[i]!;
    if (!has(labels, c.topologyKey)) return status('PodTopologySpread', 'UnschedulableAndUnresolvable', ERR_SPREAD_LABEL);
    const counts = s.counts[i]!;
    let min = counts.size < c.minDomains ? 0 : Infinity;
    if (min !== 0) for (const n of counts.values()) if (n < min) min = n;
    if (min === Infinity) min = 0;
    const self = c.selector !== null && matchLabels(c.selector, own) ? 1 : 0;
    const skew = (counts.get(labels[c.topologyKey]!) ?? 0) + self - min;
    if (skew > c.maxSkew) return status('PodTopologySpread', 'Unschedulable', ERR_SPREAD);
  }
  return undefined;
}

/**
 * PodTopologySpread's PreScore, Score and NormalizeScore over the feasible nodes (in their order);
 * undefined when there is nothing to score (Skip). `constraints` are the ScheduleAnyway ones, or
 * the defaults (`systemDefaulted`: nodes then need not have every key).
 */
export function scorePodTopologySpread(pod: any, feasible: readonly any[], allNodes: readonly any[], cluster: PodsView, constraints: readonly SpreadConstraint[], systemDefaulted: boolean): number[] | undefined {
  if (!constraints.length || !feasible.length) return undefined;
  const requireAll = !systemDefaulted;
  const ns = String(pod?.metadata?.namespace ?? '');
  const ignored = new Set<number>();
  const pairs = new Map<string, number>();
  const sizes = constraints.map(() => 0);
  feasible.forEach((node, j) => {
    const labels = labelsOf(node);
    if (requireAll && !hasAllKeys(labels, constraints)) {
      ignored.add(j);
      return;
    }
    constraints.forEach((c, i) => {
      if (c.topologyKey === LABEL_HOSTNAME) return;
      const k = pairKey(c.topologyKey, labels[c.topologyKey] ?? '');
      if (!pairs.has(k)) {
        pairs.set(k, 0);
        sizes[i]!++;
      }
    });
  });
  const weights = constraints.map((c, i) => Math.log((c.topologyKey === LABEL_HOSTNAME ? feasible.length - ignored.size : sizes[i]!) + 2));
  for (const node of allNodes) {
    const labels = labelsOf(node);
    if (requireAll && !hasAllKeys(labels, constraints)) continue;
    const pods = cluster.podsOn(String(node?.metadata?.name ?? ''));
    for (const c of constraints) {
      if (!includes(c, pod, node)) continue;
      const k = pairKey(c.topologyKey, labels[c.topologyKey] ?? '');
      const n = pairs.get(k);
      if (n === undefined) continue;
      pairs.set(k, n + countMatching(pods, c.selector, ns));
    }
  }
  const raw = feasible.map((node, j) => {
    if (ignored.has(j)) return -1;
    const labels = labelsOf(node);
    let score = 0;
    constraints.forEach((c, i) => {
      if (!has(labels, c.topologyKey)) return;
      const cnt = c.topologyKey === LABEL_HOSTNAME ? countMatching(cluster.podsOn(String(node?.metadata?.name ?? '')), c.selector, ns) : (pairs.get(pairKey(c.topologyKey, labels[c.topologyKey]!)) ?? 0);
      score += cnt * weights[i]! + (c.maxSkew - 1);
    });
    return Math.round(score);
  });
  let min = Infinity;
  let max = 0;
  for (const s of raw) {
    if (s < 0) continue;
    if (s < min) min = s;
    if (s > max) max = s;
  }
  return raw.map((s) => {
    if (s < 0) return 0;
    if (max === 0) return MAX_NODE_SCORE;
    return Math.trunc((MAX_NODE_SCORE * (max + min - s)) / max);
  });
}

/**
 * helper.DefaultSelector: the selectors of the Services in the pod's namespace that select it,
 * merged, and its controller's (a ReplicationController's, ReplicaSet's or StatefulSet's) selector.
 */
export function defaultSelector(pod: any, services: readonly any[], controller: any | undefined): Requirement[] {
  const own = labelsOf(pod);
  const merged: Record<string, string> = {};
  for (const svc of services) {
    const sel = svc?.spec?.selector;
    if (!isObject(sel) || Object.keys(sel).length === 0) continue;
    if (Object.entries(sel).every(([k, v]) => has(own, k) && own[k] === v)) Object.assign(merged, sel);
  }
  const sel = controller?.spec?.selector;
  // (a ReplicationController's selector is a map, merged over the Services'; the others' a LabelSelector, added)
  if (controller?.kind === 'ReplicationController' && isObject(sel)) Object.assign(merged, sel);
  const out: Requirement[] = Object.entries(merged).map(([k, v]) => ({ key: k, op: '=', values: [String(v)] }));
  if (controller?.kind !== 'ReplicationController' && isObject(sel)) {
    const reqs = selectorOrNothing(sel);
    if (reqs) out.push(...reqs);
  }
  return out;
}
