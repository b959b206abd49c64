// The node lifecycle controller (kube-controller-manager's node-lifecycle-controller,
// pkg/controller/nodelifecycle), its node health monitor and its NoSchedule tainting:
//   - every node-monitor-period (5 s) each Node's health is judged from what its kubelet last
//     posted: its Lease's renewTime and its Ready condition's heartbeat. A node not heard from
//     for node-monitor-grace-period (50 s; node-startup-grace-period, 60 s, for a node never
//     Ready) has its Ready, MemoryPressure, DiskPressure and PIDPressure conditions set to Unknown
//     (reason NodeStatusUnknown, "Kubelet stopped posting node status.");
//   - each Node carries the NoSchedule taints of its conditions, as TaintNodesByCondition wants:
//     node.kubernetes.io/not-ready while Ready is False, node.kubernetes.io/unreachable while it
//     is Unknown, memory-pressure, disk-pressure and pid-pressure while those are True,
//     network-unavailable, and unschedulable while spec.unschedulable. The API server's admission
//     puts not-ready on every new Node; this is what takes it off once its kubelet says Ready.
// Not done: the NoExecute taints and the eviction of pods from unreachable nodes (the taint
// eviction controller), and zone states.
//
// Nodes are few: each round lists them and the node Leases, and holds nothing between rounds.
import { nopLogger, type Logger } from '../client/log.js';
import { isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { withClient, type ControllerDescriptor } from './context.js';

export const NODE_MONITOR_PERIOD_MS = 5_000;
export const NODE_MONITOR_GRACE_PERIOD_MS = 50_000;
export const NODE_STARTUP_GRACE_PERIOD_MS = 60_000;

const CONDITION_TAINTS: [string, string, string][] = [
  // condition, status, taint key
  ['Ready', 'False', 'node.kubernetes.io/not-ready'],
  ['Ready', 'Unknown', 'node.kubernetes.io/unreachable'],
  ['MemoryPressure', 'True', 'node.kubernetes.io/memory-pressure'],
  ['DiskPressure', 'True', 'node.kubernetes.io/disk-pressure'],
  ['PIDPressure', 'True', 'node.kubernetes.io/pid-pressure'],
  ['NetworkUnavailable', 'True', 'node.kubernetes.io/network-unavailable'],
];
const MANAGED = new Set([...CONDITION_TAINTS.map((t) => t[2]), 'node.kubernetes.io/unschedulable']);

export interface NodeLifecycleOptions {
  client: RESTClient;
  /** reads the node Leases (the shared informers' client: node-controller's role has no leases, as in Kubernetes) */
  leaseClient?: RESTClient;
  log?: Logger;
  periodMs?: number;
  gracePeriodMs?: number;
  startupGracePeriodMs?: number;
  now?: () => number;
}

/** the NoSchedule taints a Node's conditions and spec call for */
export function wantedNoScheduleTaints(node: any): string[] {
  const conds: any[] = node.status?.conditions ?? [];
  const out: string[] = [];
  for (const [type, status, key] of CONDITION_TAINTS) {
    const c = conds.find((x) => x.type === type);
    // (a node without a Ready condition yet is not ready)
    if (c ? c.status === status : type === 'Ready' && status === 'False') out.push(key);
  }
  if (node.spec?.unschedulable) out.push('node.kubernetes.io/unschedulable');
  return out;
}

export class NodeLifecycle {
  private readonly log: Logger;
  private readonly now: () => number;
  /** per node: the last heartbeat seen and when this controller saw it change (its local clock, as Kubernetes') */
  private readonly seen = new Map<string, { heartbeat: string; at: number }>();

  constructor(private readonly o: NodeLifecycleOptions) {
    this.log = o.log ?? nopLogger;
    this.now = o.now ?? Date.now;
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.round();
      } catch (e) {
        if (!signal.aborted) this.log.error(e, 'Error monitoring node health');
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, this.o.periodMs ?? NODE_MONITOR_PERIOD_MS);
        signal.addEventListener('abort', () => (clearTimeout(t), r()), { once: true });
      });
    }
  }

  async round(): Promise<void> {
    const [nodes, leases] = await Promise.all([
      this.o.client.json({ method: 'GET', path: '/api/v1/nodes' }),
      (this.o.leaseClient ?? this.o.client).json({ method: 'GET', path: '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases' }),
    ]);
    const renew = new Map<string, string>();
    for (const l of leases.items ?? []) renew.set(l.metadata.name, l.spec?.renewTime ?? '');
    const names = new Set<string>();
    for (const node of nodes.items ?? []) {
      const name: string = node.metadata.name;
      names.add(name);
      await this.monitor(node, renew.get(name) ?? '').catch((e) => {
        if (!isConflict(e) && !isNotFound(e)) this.log.error(e, 'Error updating node', { node: name });
      });
    }
    for (const k of this.seen.keys()) if (!names.has(k)) this.seen.delete(k);
  }

  private async monitor(node: any, leaseRenew: string): Promise<void> {
    const name: string = node.metadata.name;
    const now = this.now();
    const conds: any[] = node.status?.conditions ?? [];
    const ready = conds.find((c) => c.type === 'Ready');
    const heartbeat = `${leaseRenew}|${ready?.lastHeartbeatTime ?? ''}|${ready?.status ?? ''}`;
    const prev = this.seen.get(name);
    if (!prev || prev.heartbeat !== heartbeat) this.seen.set(name, { heartbeat, at: now });
    const since = this.seen.get(name)!.at;
    const grace = ready ? (this.o.gracePeriodMs ?? NODE_MONITOR_GRACE_PERIOD_MS) : (this.o.startupGracePeriodMs ?? NODE_STARTUP_GRACE_PERIOD_MS);
    const path = `/api/v1/nodes/${encodeURIComponent(name)}`;
    if (now - since > grace && ready?.status !== 'Unknown') {
      // the kubelet stopped posting: its conditions become Unknown
      const at = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const types = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];
      const updated = types.map((type) => {
        const c = conds.find((x) => x.type === type);
        return {
          type,
          status: 'Unknown',
          reason: c ? 'NodeStatusUnknown' : 'NodeStatusNeverUpdated',
          message: c ? 'Kubelet stopped posting node status.' : 'Kubelet never posted node status.',
          lastHeartbeatTime: c?.lastHeartbeatTime ?? node.metadata.creationTimestamp,
          lastTransitionTime: at,
        };
      });
      const conditions = [...conds.filter((c) => !types.includes(c.type)), ...updated];
      node = await this.o.client.json({ method: 'PATCH', path: `${path}/status`, body: { metadata: { resourceVersion: node.metadata.resourceVersion }, status: { conditions } }, contentType: 'application/merge-patch+json' });
      this.log.info('Node is unresponsive: its conditions are Unknown', { node: name });
    }
    // the NoSchedule taints of its conditions
    const want = new Set(wantedNoScheduleTaints(node));
    const taints: any[] = node.spec?.taints ?? [];
    const keep = taints.filter((t) => !(MANAGED.has(t.key) && t.effect === 'NoSchedule') || want.has(t.key));
    const have = new Set(keep.filter((t) => t.effect === 'NoSchedule').map((t) => t.key));
    const add = [...want].filter((k) => !have.has(k)).map((key) => ({ key, effect: 'NoSchedule', timeAdded: new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z') }));
    if (add.length === 0 && keep.length === taints.length) return;
    const next = [...keep, ...add];
    await this.o.client.json({ method: 'PATCH', path, body: { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints: next.length ? next : null } }, contentType: 'application/merge-patch+json' });
    this.log.v(2).info('Updated the taints of a node', { node: name, taints: next.map((t) => `${t.key}:${t.effect}`).join(',') });
  }
}

export const nodeLifecycleControllerDescriptor: ControllerDescriptor = {
  name: 'node-lifecycle-controller',
  async run(ctx) {
    await withClient(ctx, 'node-controller', undefined, async (client) => {
      await new NodeLifecycle({ client, leaseClient: ctx.informerClient, log: ctx.log, periodMs: ctx.options.nodeMonitorPeriodMs, gracePeriodMs: ctx.options.nodeMonitorGracePeriodMs, startupGracePeriodMs: ctx.options.nodeStartupGracePeriodMs }).run(ctx.signal);
    });
  },
};
