// DefaultPreemption's PostFilter (kube-scheduler 1.33), without I/O: when a pod fits on no node,
// the pods of lower priority whose removal would make it fit, on the node where that costs least.
//
//   eligibility: not with preemptionPolicy Never ("not eligible due to preemptionPolicy=Never."),
//     nor while the node it was nominated for still holds a lower-priority pod that an earlier
//     preemption is terminating ("not eligible due to a terminating pod on the nominated node.");
//   candidates: the nodes whose filters said Unschedulable (UnschedulableAndUnresolvable ones
//     cannot be helped). On each: every pod of lower priority is taken away; if the pod still does
//     not fit, the filter's reason is the node's answer; otherwise the pods are put back one at a
//     time, the most important first (higher priority, then the earlier started), those whose
//     PodDisruptionBudget would be violated first, and a pod that cannot come back is a victim;
//   the node: the fewest PodDisruptionBudget violations, then the lowest highest victim priority,
//     the lowest sum of priorities, the fewest victims, the latest start among the highest-priority
//     victims, then the first;
//   no candidate: the message `preemption: 0/N nodes are available: ...` with each node's answer
//     (`No preemption victims found for incoming pod` where nothing has a lower priority,
//     `Preemption is not helpful for scheduling` for the unresolvable ones).
// The scheduler then deletes the victims (with the DisruptionTarget condition, reason
// PreemptionByScheduler, and a `Preempted` event) and nominates the node in the pod's status.
import { fitErrorMessage, newNodeInfo, NO_PREEMPTION_VICTIMS, PREEMPTION_NOT_HELPFUL, type NodeInfo, type PodInfo, type PodSummary, type Status } from './framework.js';
import { fromLabelSelector, matchLabels } from '../machinery/selectors.js';

export interface Candidate {
  node: string;
  /** the most important first */
  victims: PodSummary[];
  pdbViolations: number;
}

export interface PreemptionInput {
  p: PodInfo;
  numAllNodes: number;
  /** every node's filter status (the pod fits on none) */
  statuses: ReadonlyMap<string, Status>;
  /** the nodes whose pods were looked at */
  infos: ReadonlyMap<string, NodeInfo>;
  /** the filters of the pod on `info`, the pods of `removed` (uids) taken off the node for the plugins that count every node's pods */
  fits(info: NodeInfo, removed: ReadonlySet<string>): Status | undefined;
  /** the PodDisruptionBudgets (policy/v1) */
  pdbs: readonly any[];
  /** a placed pod's namespace, name and labels, by uid (PodDisruptionBudgets select by them) */
  podMeta(uid: string): { namespace: string; name: string; labels: Record<string, string> } | undefined;
}

/** no candidate: the message, and whether the pod waits for the victims of an earlier preemption on its nominated node */
export type PreemptionResult = { candidate: Candidate } | { message: string; waitForVictims?: boolean };

const status = (code: Status['code'], reason: string): Status => ({ code, reasons: [reason], plugin: 'DefaultPreemption' });

/** MoreImportantPod: higher priority, then started earlier */
function moreImportant(a: PodSummary, b: PodSummary): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  return a.startTime - b.startTime;
}

/** filterPodsWithPDBViolation: the pods (in order) whose eviction would take a matching budget below zero, and the others */
function splitByPDB(pods: PodSummary[], pdbs: readonly any[], meta: PreemptionInput['podMeta']): { violating: PodSummary[]; others: PodSummary[] } {
  const allowed = pdbs.map((b) => Number(b?.status?.disruptionsAllowed ?? 0));
  const selectors = pdbs.map((b) => {
    try {
      const r = fromLabelSelector(b?.spec?.selector ?? null);
      return r && r.length ? r : null; // (a missing or empty selector matches nothing)
    } catch {
      return null;
    }
  });
  const violating: PodSummary[] = [];
  const others: PodSummary[] = [];
  for (const v of pods) {
    const m = meta(v.uid);
    let violated = false;
    if (m && Object.keys(m.labels).length) {
      pdbs.forEach((b, i) => {
        const sel = selectors[i];
        if (!sel || b?.metadata?.namespace !== m.namespace || !matchLabels(sel, m.labels)) return;
        if (b?.status?.disruptedPods && Object.prototype.hasOwnProperty.call(b.status.disruptedPods, m.name)) return;
        allowed[i]!--;
        if (allowed[i]! < 0) violated = true;
      });
    }
    (violated ? violating : others).push(v);
  }
  return { violating, others };
}

/** selectVictimsOnNode: the victims on the node, or the filter's reason when even all of them are not enough */
export function selectVictimsOnNode(input: PreemptionInput, info: NodeInfo): Candidate | Status {
  const { p } = input;
  const potential = info.pods.filter((x) => x.priority < p.priority).sort(moreImportant);
  if (!potential.length) return status('UnschedulableAndUnresolvable', NO_PREEMPTION_VICTIMS);
  const removed = new Set(potential.map((x) => x.uid));
  const without = () => newNodeInfo(info.node, info.pods.filter((x) => !removed.has(x.uid)));
  const all = input.fits(without(), removed);
  if (all) return all;
  const { violating, others } = splitByPDB(potential, input.pdbs, input.podMeta);
  const victims: PodSummary[] = [];
  let pdbViolations = 0;
  const reprieve = (v: PodSummary, violates: boolean) => {
    removed.delete(v.uid);
    if (input.fits(without(), removed)) {
      removed.add(v.uid);
      victims.push(v);
      if (violates) pdbViolations++;
    }
  };
  for (const v of violating) reprieve(v, true);
  for (const v of others) reprieve(v, false);
  victims.sort(moreImportant);
  return { node: info.name, victims, pdbViolations };
}

/** the earliest start among the victims of the highest priority (GetEarliestPodStartTime) */
function earliestTopStart(victims: PodSummary[]): number {
  if (!victims.length) return Infinity;
  const top = Math.max(...victims.map((v) => v.priority));
  return Math.min(...victims.filter((v) => v.priority === top).map((v) => v.startTime));
}

/** pickOneNodeForPreemption */
export function pickOneCandidate(cands: Candidate[]): Candidate | undefined {
  if (!cands.length) return undefined;
  const empty = cands.find((c) => c.victims.length === 0);
  if (empty) return empty;
  const OFFSET = 2 ** 31; // (MaxInt32 + 1: every priority counts as a positive number)
  const keys: ((c: Candidate) => number)[] = [
    (c) => c.pdbViolations,
    (c) => c.victims[0]!.priority,
    (c) => c.victims.reduce((s, v) => s + v.priority + OFFSET, 0),
    (c) => c.victims.length,
    (c) => -earliestTopStart(c.victims),
  ];
  let left = cands;
  for (const key of keys) {
    const best = Math.min(...left.map(key));
    left = left.filter((c) => key(c) === best);
    if (left.length === 1) break;
  }
  return left[0];
}

const TERMINATING_VICTIM = 'not eligible due to a terminating pod on the nominated node.';

/** PodEligibleToPreemptOthers: the reason the pod may not preempt, or undefined */
export function notEligible(p: PodInfo, statuses: ReadonlyMap<string, Status>, infos: ReadonlyMap<string, NodeInfo>): string | undefined {
  if (p.pod?.spec?.preemptionPolicy === 'Never') return 'not eligible due to preemptionPolicy=Never.';
  const nominated = p.pod?.status?.nominatedNodeName;
  if (typeof nominated !== 'string' || !nominated) return undefined;
  if (statuses.get(nominated)?.code === 'UnschedulableAndUnresolvable') return undefined;
  const info = infos.get(nominated);
  if (info?.pods.some((x) => x.priority < p.priority && x.preempted)) return TERMINATING_VICTIM;
  return undefined;
}

/** DefaultPreemption's PostFilter: the node and its victims, or the message of why there are none */
export function findPreemption(input: PreemptionInput): PreemptionResult {
  const why = notEligible(input.p, input.statuses, input.infos);
  if (why) return why === TERMINATING_VICTIM ? { message: `preemption: ${why}`, waitForVictims: true } : { message: `preemption: ${why}` };
  const dry = new Map<string, Status>();
  const cands: Candidate[] = [];
  for (const [name, s] of input.statuses) {
    if (s.code !== 'Unschedulable') continue;
    const info = input.infos.get(name);
    if (!info) continue;
    const r = selectVictimsOnNode(input, info);
    if ('code' in r) dry.set(name, r);
    else cands.push(r);
  }
  const best = pickOneCandidate(cands);
  if (best) return { candidate: best };
  const inner = fitErrorMessage({ numAllNodes: input.numAllNodes, statuses: dry, absent: status('UnschedulableAndUnresolvable', PREEMPTION_NOT_HELPFUL) });
  return { message: `preemption: ${inner}` };
}
