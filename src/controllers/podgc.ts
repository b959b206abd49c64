// The pod garbage collector (kube-controller-manager's pod-garbage-collector-controller,
// pkg/controller/podgc). Every 20 s:
//   - terminated pods (phase Succeeded or Failed) beyond --terminated-pod-gc-threshold (12500;
//     <= 0 turns this off) are deleted, evicted ones first, then the oldest;
//   - pods bound to a node that no longer exists are deleted once the node has been missing for
//     40 s (a quarantine against a node informer that is behind) and a fresh read says it is gone,
//     with the condition DisruptionTarget (reason DeletionByPodGC) and, unless terminated
//     already, phase Failed written first;
//   - pods being deleted on a node that is not Ready and has the node.kubernetes.io/out-of-service
//     taint are deleted at once, phase Failed first (non-graceful node shutdown).
// Deletes are forced (grace period 0): no node agent is left to end such a pod.
//
// Kubernetes' collector keeps an informer over every pod. Here each round lists what it needs
// with field selectors the API server applies (terminated pods: status.phase=Succeeded and
// =Failed; pods on missing nodes: spec.nodeName!= plus spec.nodeName!=<node> for each existing
// node), so that nothing is held between rounds: in one process with the API server an informer
// would keep a second copy of every pod bound to a node (the benchmark's 10,000 Pods: +120 MiB of
// heap) and decode every pod write again. Kubernetes' third sweep, unscheduled pods being
// deleted, has nothing to do here: the API server deletes a pod that is on no node at once.
import { pause } from '../client/flowcontrol.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient } from '../client/resources.js';
import { PODS } from './podwatch.js';
import { withClient, type ControllerDescriptor } from './context.js';

const NODES = { group: '', version: 'v1', resource: 'nodes' };
/** the taint an administrator puts on a node that is shut down for good (non-graceful node shutdown) */
const OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';
/** how often the sweeps run (gcCheckPeriod) */
export const GC_CHECK_PERIOD_MS = 20_000;
/** how long a node must be missing before its pods go (quarantineTime) */
export const QUARANTINE_MS = 40_000;

export interface PodGCOptions {
  client: RESTClient;
  /** --terminated-pod-gc-threshold (<= 0: terminated pods are left alone) */
  threshold: number;
  log?: Logger;
  periodMs?: number;
  quarantineMs?: number;
  now?: () => number;
}

/** the longest field selector of node exclusions sent; beyond it pods on nodes are listed whole and filtered here */
const MAX_SELECTOR_CHARS = 6000;

const isEvicted = (p: any): boolean => p?.status?.phase === 'Failed' && p?.status?.reason === 'Evicted';

/** evicted pods first, then the oldest, then by name (byEvictionAndCreationTimestamp) */
function deletionOrder(a: any, b: any): number {
  const ea = isEvicted(a);
  const eb = isEvicted(b);
  if (ea !== eb) return ea ? -1 : 1;
  const ta = Date.parse(a?.metadata?.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b?.metadata?.creationTimestamp ?? '') || 0;
  if (ta !== tb) return ta - tb;
  const na = a?.metadata?.name ?? '';
  const nb = b?.metadata?.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

export class PodGC {
  private readonly log: Logger;
  private readonly now: () => number;
  /** when each missing node was first seen missing */
  private readonly missingSince = new Map<string, number>();

  constructor(private readonly o: PodGCOptions) {
    this.log = o.log ?? nopLogger;
    this.now = o.now ?? Date.now;
  }

  async run(signal: AbortSignal): Promise<void> {
    this.log.info('Starting GC controller');
    try {
      while (!signal.aborted) {
        try {
          await this.gc(signal);
        } catch (e) {
          if (!signal.aborted) this.log.error(e, 'Pod garbage collection failed');
        }
        await pause(this.o.periodMs ?? GC_CHECK_PERIOD_MS, signal);
      }
    } finally {
      this.log.info('Shutting down GC controller');
    }
  }

  private list(fieldSelector: string, signal: AbortSignal): Promise<any[]> {
    return new ResourceClient<any>(this.o.client, PODS).listAll({ fieldSelector, signal }).then((l) => l.items ?? []);
  }

  /** one round of the sweeps */
  async gc(signal: AbortSignal): Promise<void> {
    if (this.o.threshold > 0) await this.gcTerminated(signal);
    const nodes: any[] = (await new ResourceClient<any>(this.o.client, NODES).listAll({ signal })).items ?? [];
    await this.gcTerminating(nodes, signal);
    await this.gcOrphaned(nodes, signal);
  }

  /**
   * Pods being deleted on nodes that are not Ready and carry the `node.kubernetes.io/out-of-service`
   * taint (a node an administrator says is shut down: non-graceful node shutdown) are deleted at
   * once, as no kubelet will confirm their end.
   */
  private async gcTerminating(nodes: any[], signal: AbortSignal): Promise<void> {
    const out = nodes.filter((n) => {
      const ready = (n?.status?.conditions ?? []).find((c: any) => c?.type === 'Ready')?.status === 'True';
      return !ready && (n?.spec?.taints ?? []).some((t: any) => t?.key === OUT_OF_SERVICE);
    });
    if (out.length === 0) return;
    const pods = (await Promise.all(out.map((n) => this.list(`spec.nodeName=${n.metadata.name}`, signal)))).flat().filter((p) => p?.metadata?.deletionTimestamp);
    if (pods.length === 0) return;
    this.log.info('Garbage collecting pods that are terminating on node tainted with node.kubernetes.io/out-of-service', { numPods: pods.length });
    pods.sort(deletionOrder);
    for (const p of pods) await this.markFailedAndDelete(p, undefined, signal);
  }

  private async gcTerminated(signal: AbortSignal): Promise<void> {
    const [succeeded, failed] = await Promise.all([this.list('status.phase=Succeeded', signal), this.list('status.phase=Failed', signal)]);
    const pods = [...succeeded, ...failed];
    const excess = pods.length - this.o.threshold;
    if (excess <= 0) return;
    this.log.info('Garbage collecting pods', { numPods: excess });
    pods.sort(deletionOrder);
    await Promise.all(pods.slice(0, excess).map((p) => this.markFailedAndDelete(p, undefined, signal)));
  }

  private async gcOrphaned(nodes: any[], signal: AbortSignal): Promise<void> {
    const now = this.now();
    const existing = new Set<string>(nodes.map((n: any) => n?.metadata?.name));
    const exclusions = ['spec.nodeName!=', ...[...existing].map((n) => `spec.nodeName!=${n}`)].join(',');
    const candidates = await this.list(exclusions.length <= MAX_SELECTOR_CHARS ? exclusions : 'spec.nodeName!=', signal);
    const podsByNode = new Map<string, any[]>();
    for (const p of candidates) {
      const node = p?.spec?.nodeName;
      if (!node || existing.has(node)) continue;
      let list = podsByNode.get(node);
      if (!list) podsByNode.set(node, (list = []));
      list.push(p);
    }
    for (const node of [...this.missingSince.keys()]) if (!podsByNode.has(node)) this.missingSince.delete(node);
    for (const [node, pods] of podsByNode) {
      const since = this.missingSince.get(node);
      if (since === undefined) {
        this.missingSince.set(node, now);
        continue;
      }
      if (now - since < (this.o.quarantineMs ?? QUARANTINE_MS)) continue;
      // (the informer may be behind: a fresh read decides)
      try {
        await new ResourceClient<any>(this.o.client, NODES).get(node, { signal });
        this.missingSince.delete(node);
        continue;
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      for (const pod of pods) {
        this.log.info('Found orphaned Pod assigned to the Node, deleting', { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, node });
        const condition = { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists', lastTransitionTime: new Date(this.now()).toISOString().replace(/\.\d+Z$/, 'Z') };
        await this.markFailedAndDelete(pod, condition, signal);
      }
    }
  }

  /** writes phase Failed (unless terminated) and the condition, then deletes the pod at once */
  private async markFailedAndDelete(pod: any, condition: Record<string, string> | undefined, signal: AbortSignal): Promise<void> {
    const pods = new ResourceClient<any>(this.o.client, PODS, pod.metadata.namespace);
    const phase = pod.status?.phase;
    const status: Record<string, unknown> = {};
    if (phase !== 'Succeeded' && phase !== 'Failed') status['phase'] = 'Failed';
    if (condition) status['conditions'] = [condition];
    try {
      if (Object.keys(status).length) {
        await this.o.client.json({ method: 'PATCH', path: pods.path(pod.metadata.name, 'status'), body: { metadata: { uid: pod.metadata.uid }, status }, contentType: 'application/strategic-merge-patch+json', signal });
      }
      await pods.delete(pod.metadata.name, { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid }, signal });
      this.log.v(2).info('Forced deletion of pod', { pod: `${pod.metadata.namespace}/${pod.metadata.name}` });
    } catch (e) {
      if (isNotFound(e) || isConflict(e)) return;
      throw e;
    }
  }
}

export const podGCControllerDescriptor: ControllerDescriptor = {
  name: 'pod-garbage-collector-controller',
  async run(ctx) {
    await withClient(ctx, 'pod-garbage-collector', undefined, async (client) => {
      await new PodGC({ client, threshold: ctx.options.terminatedPodGCThreshold, log: ctx.log }).run(ctx.signal);
    });
  },
};
