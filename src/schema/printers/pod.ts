// The Pod table: NAME READY STATUS RESTARTS AGE, wide IP NODE NOMINATED NODE READINESS GATES.
//
// STATUS is the one-word summary kubectl users know: the phase, overridden by the pod's reason, by
// a scheduling gate, by the first init container that has not finished ("Init:1/3",
// "Init:CrashLoopBackOff", "Init:Error"), by the reasons of waiting or terminated app containers
// (the first container in spec order wins), "NotReady" when a running pod has a completed
// container and is not Ready, "Terminating" while a live pod is being deleted and "Unknown" for
// pods lost with their node. RESTARTS adds the time since the most recent restart: "4 (20s ago)".
import { age, ago, arr, findCondition, int, nameOf, obj, parseTime, str } from './format.js';
import { AGE_COLUMN, NAME_COLUMN, col, type Printer, type RowCondition } from './types.js';

const SUCCEEDED: RowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
];
const FAILED: RowCondition[] = [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }];

/** A sidecar: an init container with restartPolicy Always keeps running beside the app containers. */
function isRestartable(container: any): boolean {
  return container?.restartPolicy === 'Always';
}

/** Tracks the latest lastState.terminated.finishedAt among a set of container statuses. */
class Latest {
  t: number | null = null;
  see(status: any): void {
    const term = status?.lastState?.terminated;
    if (term === undefined || term === null) return;
    const f = parseTime(term.finishedAt);
    if (f !== null && (this.t === null || f > this.t)) this.t = f;
  }
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

function terminatedReason(term: any, prefix: string): string {
  const reason = str(term?.reason);
  if (reason !== '') return prefix + reason;
  const signal = int(term?.signal);
  if (signal !== 0) return `${prefix}Signal:${signal}`;
  return `${prefix}ExitCode:${int(term?.exitCode)}`;
}

export interface PodSummary {
  ready: number;
  total: number;
  status: string;
  restarts: number;
  /** time of the last restart counted in `restarts`, ms since the epoch, or null */
  lastRestart: number | null;
}

/** The READY, STATUS and RESTARTS facts of a pod, computed as Kubernetes' pod printer does. */
export function summarizePod(pod: any): PodSummary {
  const spec = obj(pod?.spec);
  const status = obj(pod?.status);
  const initSpecs = arr(spec.initContainers);
  const phase = str(status.phase);

  let total = arr(spec.containers).length;
  let ready = 0;
  let restarts = 0;
  let sidecarRestarts = 0;
  const last = new Latest();
  const lastSidecar = new Latest();

  let reason = str(status.reason) !== '' ? str(status.reason) : phase;
  for (const c of arr(status.conditions)) {
    if (c?.type === 'PodScheduled' && c?.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }

  const initByName = new Map<string, any>();
  for (const c of initSpecs) {
    initByName.set(str(c?.name), c);
    if (isRestartable(c)) total++;
  }

  // Init containers run in order; the first one that has not finished decides the status.
  let initializing = false;
  const initStatuses = arr(status.initContainerStatuses);
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i];
    const state = obj(cs?.state);
    restarts += int(cs?.restartCount);
    last.see(cs);
    const sidecar = isRestartable(initByName.get(str(cs?.name)));
    if (sidecar) {
      sidecarRestarts += int(cs?.restartCount);
      lastSidecar.see(cs);
    }
    if (present(state.terminated) && int(state.terminated.exitCode) === 0) continue;
    if (sidecar && cs?.started === true) {
      if (cs?.ready === true) ready++;
      continue;
    }
    if (present(state.terminated)) {
      reason = terminatedReason(state.terminated, 'Init:');
    } else if (present(state.waiting) && str(state.waiting.reason) !== '' && state.waiting.reason !== 'PodInitializing') {
      reason = 'Init:' + str(state.waiting.reason);
    } else {
      reason = `Init:${i}/${initSpecs.length}`;
    }
    initializing = true;
    break;
  }

  const initialized = findCondition(status.conditions, 'Initialized');
  if (!initializing || initialized?.status === 'True') {
    // Past initialization only the sidecars' restarts still count, with the app containers'.
    restarts = sidecarRestarts;
    last.t = lastSidecar.t;
    let hasRunning = false;
    const statuses = arr(status.containerStatuses);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i];
      const state = obj(cs?.state);
      restarts += int(cs?.restartCount);
      last.see(cs);
      if (present(state.waiting) && str(state.waiting.reason) !== '') {
        reason = str(state.waiting.reason);
      } else if (present(state.terminated)) {
        reason = terminatedReason(state.terminated, '');
      } else if (cs?.ready === true && present(state.running)) {
        hasRunning = true;
        ready++;
      }
    }
    // A pod with one container completed and another still running is not "Completed".
    if (reason === 'Completed' && hasRunning) {
      const podReady = arr(status.conditions).some((c) => c?.type === 'Ready' && c?.status === 'True');
      reason = podReady ? 'Running' : 'NotReady';
    }
  }

  const deleting = present(pod?.metadata?.deletionTimestamp);
  if (deleting && status.reason === 'NodeLost') {
    reason = 'Unknown';
  } else if (deleting && phase !== 'Succeeded' && phase !== 'Failed') {
    reason = 'Terminating';
  }

  return { ready, total, status: reason, restarts, lastRestart: last.t };
}

function readinessGates(pod: any): string {
  const gates = arr(pod?.spec?.readinessGates);
  if (gates.length === 0) return '<none>';
  let trueCount = 0;
  for (const g of gates) {
    const c = findCondition(pod?.status?.conditions, str(g?.conditionType));
    if (c?.status === 'True') trueCount++;
  }
  return `${trueCount}/${gates.length}`;
}

function podIP(pod: any): string {
  const status = obj(pod?.status);
  const ip = str(status.podIP) || str(arr(status.podIPs)[0]?.ip);
  return ip === '' ? '<none>' : ip;
}

export const podPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    col('Ready', 'string', 'Ready containers out of all containers that count (app containers and sidecars).'),
    col('Status', 'string', "A one-word summary of the pod's state, taken from its phase, reason and containers."),
    col('Restarts', 'string', 'Total container restarts, with how long ago the most recent one was.'),
    AGE_COLUMN,
    col('IP', 'string', 'The primary IP address assigned to the pod.', 1),
    col('Node', 'string', 'The node the pod is bound to.', 1),
    col('Nominated Node', 'string', 'The node the scheduler expects to place the pod on after preempting others.', 1),
    col('Readiness Gates', 'string', 'Readiness gates whose condition is True, out of all the gates the pod declares.', 1),
  ],
  cells(pod: any, now: number): unknown[] {
    const s = summarizePod(pod);
    let restarts = String(s.restarts);
    if (s.restarts !== 0 && s.lastRestart !== null) {
      restarts = `${s.restarts} (${ago(s.lastRestart, now)} ago)`;
    }
    const nodeName = str(pod?.spec?.nodeName) || '<none>';
    const nominated = str(pod?.status?.nominatedNodeName) || '<none>';
    return [nameOf(pod), `${s.ready}/${s.total}`, s.status, restarts, age(pod, now), podIP(pod), nodeName, nominated, readinessGates(pod)];
  },
  conditions(pod: any): RowCondition[] | undefined {
    switch (pod?.status?.phase) {
      case 'Succeeded':
        return SUCCEEDED.map((c) => ({ ...c }));
      case 'Failed':
        return FAILED.map((c) => ({ ...c }));
      default:
        return undefined;
    }
  },
};
