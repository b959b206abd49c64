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
//   - a node whose Ready condition is False gets the NoExecute taint node.kubernetes.io/not-ready,
//     Unknown node.kubernetes.io/unreachable (the one swapped for the other at once; both taken
//     off once it is Ready), for the taint eviction controller (tainteviction.ts) to act on. The
//     taints are added at --node-eviction-rate nodes per second per zone (a token bucket of one:
//     the first at once); in a zone of more than two not-ready nodes making up at least
//     --unhealthy-zone-threshold of it (PartialDisruption) at --secondary-node-eviction-rate,
//     or not at all unless the cluster has more than --large-cluster-size-threshold nodes. When
//     every zone has no ready node (FullDisruption everywhere, e.g. a one-node cluster whose node
//     stops, or a control plane cut off from every node) the controller taints nothing and takes
//     these taints off every node ("master disruption mode"), as evicting everything would not help;
//   - when a node stops being Ready, its pods' Ready condition is set to False (event NodeNotReady
//     on each), so that Services stop sending them traffic.
// Not done: the node's zone labels are read as they are (no cloud provider sets them).
//
// Nodes are few: each round lists them and the node Leases, and holds nothing between rounds.
import { pause } from '../client/flowcontrol.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { EventRecorder } from '../client/events.js';
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
const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';

/** a zone's health (kube-controller-manager's ZoneState) */
export type ZoneState = 'Normal' | 'PartialDisruption' | 'FullDisruption';

/** a zone's state from its ready and not-ready node counts (ComputeZoneState) */
export function zoneState(ready: number, notReady: number, unhealthyThreshold: number): ZoneState {
  if (ready === 0 && notReady > 0) return 'FullDisruption';
  if (notReady > 2 && notReady / (notReady + ready) >= unhealthyThreshold) return 'PartialDisruption';
  return 'Normal';
}

/** a node's zone: its region and zone labels (GetZoneKey; '' for a node with neither) */
export function zoneOf(node: any): string {
  const l = node.metadata?.labels ?? {};
  const region = l['topology.kubernetes.io/region'] ?? l['failure-domain.beta.kubernetes.io/region'] ?? '';
  const zone = l['topology.kubernetes.io/zone'] ?? l['failure-domain.beta.kubernetes.io/zone'] ?? '';
  return region === '' && zone === '' ? '' : `${region}:\0:${zone}`;
}

/** time as the API writes it, to the second */
function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export interface NodeLifecycleOptions {
  client: RESTClient;
  /** reads the node Leases (the shared informers' client: node-controller's role has no leases, as in Kubernetes) */
  leaseClient?: RESTClient;
  log?: Logger;
  periodMs?: number;
  gracePeriodMs?: number;
  startupGracePeriodMs?: number;
  /** events (NodeNotReady on the pods of a node that stops being Ready) */
  recorder?: EventRecorder;
  /** --node-eviction-rate, --secondary-node-eviction-rate, --large-cluster-size-threshold, --unhealthy-zone-threshold */
  evictionRate?: number;
  secondaryEvictionRate?: number;
  largeClusterThreshold?: number;
  unhealthyZoneThreshold?: number;
  now?: () => number;
}

/** a node's Ready condition status (undefined: none yet) */
function readyStatus(node: any): string | undefined {
  return (node.status?.conditions ?? []).find((c: any) => c.type === 'Ready')?.status;
}

/** the node's NoExecute not-ready and unreachable taints, by key */
function noExecuteOf(node: any): string[] {
  return (node.spec?.taints ?? []).filter((t: any) => t.effect === 'NoExecute' && (t.key === NOT_READY || t.key === UNREACHABLE)).map((t: any) => t.key);
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
  /** per zone: the NoExecute tainting's token bucket, its rate, and the nodes waiting in order */
  private readonly zones = new Map<string, { qps: number; tokens: number; at: number; queue: string[] }>();
  /** the Ready status each node had at the last round (for the pods of a node that stops being Ready) */
  private readonly lastReady = new Map<string, string>();
  private masterDisruption = false;

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
      await pause(this.o.periodMs ?? NODE_MONITOR_PERIOD_MS, signal);
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
    const current: any[] = [];
    for (const node of nodes.items ?? []) {
      const name: string = node.metadata.name;
      names.add(name);
      const updated = await this.monitor(node, renew.get(name) ?? '').catch((e) => {
        if (!isConflict(e) && !isNotFound(e)) this.log.error(e, 'Error updating node', { node: name });
        return undefined;
      });
      if (updated) current.push(updated);
    }
    for (const k of this.seen.keys()) if (!names.has(k)) this.seen.delete(k);
    for (const k of this.lastReady.keys()) if (!names.has(k)) this.lastReady.delete(k);
    await this.noExecute(current);
  }

  /** the NoExecute taints of not-ready nodes, by zone and rate (see the head of this file) */
  private async noExecute(nodes: any[]): Promise<void> {
    const now = this.now();
    const byZone = new Map<string, { ready: number; notReady: number }>();
    for (const node of nodes) {
      const z = zoneOf(node);
      const c = byZone.get(z) ?? { ready: 0, notReady: 0 };
      const status = readyStatus(node);
      // (a node with no Ready condition yet is not counted, but its zone is known)
      if (status === 'True') c.ready++;
      else if (status !== undefined) c.notReady++;
      byZone.set(z, c);
    }
    const threshold = this.o.unhealthyZoneThreshold ?? 0.55;
    const states = new Map([...byZone].map(([z, c]) => [z, zoneState(c.ready, c.notReady, threshold)]));
    const allFull = states.size > 0 && [...states.values()].every((st) => st === 'FullDisruption');
    if (allFull !== this.masterDisruption) {
      this.masterDisruption = allFull;
      this.zones.clear();
      if (allFull) this.log.info('Controller detected that all Nodes are not-Ready. Entering master disruption mode');
      else this.log.info('Controller detected that some Nodes are Ready. Exiting master disruption mode');
    }
    const rate = this.o.evictionRate ?? 0.1;
    for (const [z, st] of states) {
      const qps = st === 'PartialDisruption' ? (nodes.length > (this.o.largeClusterThreshold ?? 50) ? this.o.secondaryEvictionRate ?? 0.01 : 0) : rate;
      const zone = this.zones.get(z);
      if (!zone) this.zones.set(z, { qps, tokens: qps > 0 ? 1 : 0, at: now, queue: [] });
      else if (zone.qps !== qps) Object.assign(zone, { qps, tokens: qps > 0 ? 1 : 0, at: now });
      else {
        zone.tokens = Math.min(1, zone.tokens + ((now - zone.at) / 1000) * qps);
        zone.at = now;
      }
    }
    for (const node of nodes) {
      const name: string = node.metadata.name;
      const status = readyStatus(node);
      const has = noExecuteOf(node);
      const zone = this.zones.get(zoneOf(node))!;
      const queued = zone.queue.indexOf(name);
      if (this.masterDisruption || status === 'True' || status === undefined) {
        // ready (or everything down): its taints go at once
        if (queued >= 0) zone.queue.splice(queued, 1);
        if (has.length) await this.setNoExecute(node, undefined, now);
        continue;
      }
      const want = status === 'False' ? NOT_READY : UNREACHABLE;
      if (has.includes(want) && has.length === 1) {
        if (queued >= 0) zone.queue.splice(queued, 1);
        continue;
      }
      // the other one on it already: swapped at once; else it waits its zone's turn
      if (has.length) await this.setNoExecute(node, want, now);
      else if (queued < 0) zone.queue.push(name);
    }
    const byName = new Map(nodes.map((n) => [n.metadata.name, n]));
    for (const zone of this.zones.values()) {
      while (zone.queue.length && zone.tokens >= 1) {
        const node = byName.get(zone.queue.shift()!);
        const status = node ? readyStatus(node) : 'True';
        if (!node || status === 'True' || status === undefined) continue;
        zone.tokens -= 1;
        await this.setNoExecute(node, status === 'False' ? NOT_READY : UNREACHABLE, now);
      }
    }
  }

  /** the node's NoExecute not-ready/unreachable taint made `key` (undefined: none) */
  private async setNoExecute(node: any, key: string | undefined, now: number): Promise<void> {
    const name: string = node.metadata.name;
    const taints: any[] = node.spec?.taints ?? [];
    const next = taints.filter((t) => !(t.effect === 'NoExecute' && (t.key === NOT_READY || t.key === UNREACHABLE)));
    if (key) next.push({ key, effect: 'NoExecute', timeAdded: rfc3339(now) });
    try {
      await this.o.client.json({ method: 'PATCH', path: `/api/v1/nodes/${encodeURIComponent(name)}`, body: { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints: next.length ? next : null } }, contentType: 'application/merge-patch+json' });
      this.log.info(key ? 'Added a NoExecute taint to a node' : 'Removed the NoExecute taints of a node', { node: name, ...(key ? { taint: key } : {}) });
    } catch (e) {
      // (a conflict: the next round sees the node as it is now)
      if (!isConflict(e) && !isNotFound(e)) this.log.error(e, 'Error updating the taints of a node', { node: name });
    }
  }

  /** a node that stopped being Ready: its pods' Ready condition False (MarkPodsNotReady) */
  private async markPodsNotReady(name: string, now: number): Promise<void> {
    const list = await this.o.client.json({ method: 'GET', path: `/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${name}`)}` });
    for (const pod of list.items ?? []) {
      const conds: any[] = pod.status?.conditions ?? [];
      const ready = conds.find((c) => c.type === 'Ready');
      if (!ready || ready.status === 'False') continue;
      const path = `/api/v1/namespaces/${encodeURIComponent(pod.metadata.namespace)}/pods/${encodeURIComponent(pod.metadata.name)}/status`;
      try {
        await this.o.client.json({
          method: 'PATCH', path, contentType: 'application/strategic-merge-patch+json',
          body: { metadata: { uid: pod.metadata.uid }, status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: rfc3339(now) }] } },
        });
        void this.o.recorder?.event({ kind: 'Pod', apiVersion: 'v1', metadata: pod.metadata }, 'Warning', 'NodeNotReady', 'Node is not ready');
      } catch (e) {
        if (!isConflict(e) && !isNotFound(e)) this.log.error(e, 'Error marking a pod not ready', { pod: `${pod.metadata.namespace}/${pod.metadata.name}` });
      }
    }
  }

  private async monitor(node: any, leaseRenew: string): Promise<any> {
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
    // a node that stopped being Ready: its pods are not ready either
    const status = readyStatus(node) ?? '';
    const was = this.lastReady.get(name);
    this.lastReady.set(name, status);
    if (was === 'True' && status !== 'True') {
      this.log.info('Node is not ready: marking its pods not ready', { node: name });
      await this.markPodsNotReady(name, now).catch((e) => this.log.error(e, 'Error marking the pods of a node not ready', { node: name }));
    }
    // the NoSchedule taints of its conditions
    const want = new Set(wantedNoScheduleTaints(node));
    const taints: any[] = node.spec?.taints ?? [];
    const keep = taints.filter((t) => !(MANAGED.has(t.key) && t.effect === 'NoSchedule') || want.has(t.key));
    const have = new Set(keep.filter((t) => t.effect === 'NoSchedule').map((t) => t.key));
    const add = [...want].filter((k) => !have.has(k)).map((key) => ({ key, effect: 'NoSchedule', timeAdded: new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z') }));
    if (add.length === 0 && keep.length === taints.length) return node;
    const next = [...keep, ...add];
    node = await this.o.client.json({ method: 'PATCH', path, body: { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints: next.length ? next : null } }, contentType: 'application/merge-patch+json' });
    this.log.v(2).info('Updated the taints of a node', { node: name, taints: next.map((t) => `${t.key}:${t.effect}`).join(',') });
    return node;
  }
}

export const nodeLifecycleControllerDescriptor: ControllerDescriptor = {
  name: 'node-lifecycle-controller',
  async run(ctx) {
    await withClient(ctx, 'node-controller', undefined, async (client) => {
      const o = ctx.options;
      await new NodeLifecycle({
        client, leaseClient: ctx.informerClient, log: ctx.log, recorder: new EventRecorder(client, 'node-controller', ctx.log),
        periodMs: o.nodeMonitorPeriodMs, gracePeriodMs: o.nodeMonitorGracePeriodMs, startupGracePeriodMs: o.nodeStartupGracePeriodMs,
        evictionRate: o.nodeEvictionRate, secondaryEvictionRate: o.secondaryNodeEvictionRate, largeClusterThreshold: o.largeClusterSizeThreshold, unhealthyZoneThreshold: o.unhealthyZoneThreshold,
      }).run(ctx.signal);
    });
  },
};
