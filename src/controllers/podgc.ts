// The pod garbage collector (kube-controller-manager's pod-garbage-collector-controller,
// pkg/controller/podgc). Every 20 s:
//   - terminated pods (phase Succeeded or Failed) beyond --terminated-pod-gc-threshold (12500;
//     <= 0 turns this off) are deleted, evicted ones first, then the oldest;
//   - pods bound to a node that no longer exists are deleted once the node has been missing for
//     40 s (a quarantine against a node informer that is behind) and a fresh read says it is gone,
//     with the condition DisruptionTarget (reason DeletionByPodGC) and, unless terminated
//     already, phase Failed written first.
// Deletes are forced (grace period 0): no node agent is left to end such a pod.
//
// Kubernetes' collector watches every pod. Here two informers hold only terminated pods (field
// selectors status.phase=Succeeded and =Failed, and only while the threshold is on) and one only
// pods bound to a node (spec.nodeName!=), so that the pending pods of a cluster without node
// agents cost it nothing. Kubernetes' third sweep, unscheduled pods being deleted, has nothing to
// do here: the API server deletes a pod that is on no node at once.
import type { Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isConflict, isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient } from '../client/resources.js';
import { PODS } from './podwatch.js';
import { informerOf, withClient, type ControllerDescriptor } from './context.js';

const NODES = { group: '', version: 'v1', resource: 'nodes' };
/** how often the sweeps run (gcCheckPeriod) */
export const GC_CHECK_PERIOD_MS = 20_000;
/** how long a node must be missing before its pods go (quarantineTime) */
export const QUARANTINE_MS = 40_000;

export interface PodGCOptions {
  client: RESTClient;
  /** pods with status.phase=Succeeded and =Failed; absent when the threshold is off */
  terminated?: [Informer<any>, Informer<any>];
  /** pods with spec.nodeName set */
  scheduled: Informer<any>;
  nodes: Informer<any>;
  /** --terminated-pod-gc-threshold */
  threshold: number;
  log?: Logger;
  periodMs?: number;
  quarantineMs?: number;
  now?: () => number;
}

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
    const informers = [this.o.scheduled, this.o.nodes, ...(this.o.terminated ?? [])];
    this.log.info('Starting GC controller');
    try {
      const synced = await Promise.all(informers.map((i) => i.waitForSync({ signal })));
      if (!synced.every(Boolean)) return;
      while (!signal.aborted) {
        try {
          await this.gc(signal);
        } catch (e) {
          if (!signal.aborted) this.log.error(e, 'Pod garbage collection failed');
        }
        await new Promise<void>((r) => {
          const t = setTimeout(r, this.o.periodMs ?? GC_CHECK_PERIOD_MS);
          signal.addEventListener('abort', () => (clearTimeout(t), r()), { once: true });
        });
      }
    } finally {
      this.log.info('Shutting down GC controller');
    }
  }

  /** one round of the sweeps */
  async gc(signal: AbortSignal): Promise<void> {
    if (this.o.terminated && this.o.threshold > 0) await this.gcTerminated(signal);
    await this.gcOrphaned(signal);
  }

  private async gcTerminated(signal: AbortSignal): Promise<void> {
    const pods = [...this.o.terminated![0].list(), ...this.o.terminated![1].list()];
    const excess = pods.length - this.o.threshold;
    if (excess <= 0) return;
    this.log.info('Garbage collecting pods', { numPods: excess });
    pods.sort(deletionOrder);
    await Promise.all(pods.slice(0, excess).map((p) => this.markFailedAndDelete(p, undefined, signal)));
  }

  private async gcOrphaned(signal: AbortSignal): Promise<void> {
    const now = this.now();
    const existing = new Set(this.o.nodes.list().map((n) => n?.metadata?.name));
    const podsByNode = new Map<string, any[]>();
    for (const p of this.o.scheduled.list()) {
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
      const threshold = ctx.options.terminatedPodGCThreshold;
      const phase = (p: string) => informerOf<any>(ctx, PODS, { fieldSelector: `status.phase=${p}` });
      const c = new PodGC({
        client,
        terminated: threshold > 0 ? [phase('Succeeded'), phase('Failed')] : undefined,
        scheduled: informerOf<any>(ctx, PODS, { fieldSelector: 'spec.nodeName!=' }),
        nodes: informerOf<any>(ctx, NODES),
        threshold,
        log: ctx.log,
      });
      await c.run(ctx.signal);
    });
  },
};
