// The taint eviction controller (kube-controller-manager's taint-eviction-controller,
// pkg/controller/tainteviction): a pod bound to a node with NoExecute taints is deleted unless it
// tolerates every one of them, at once when it does not, after the least tolerationSeconds of the
// tolerations it uses when they all have one, and never when one of them has none. The
// DefaultTolerationSeconds admission gives every pod 300 s of node.kubernetes.io/not-ready and
// unreachable, the taints the node lifecycle controller puts on nodes that fail, so that such
// a node's pods are deleted 5 minutes after the taint (and their controllers make new ones).
// A deletion is scheduled from when the controller sees the pod on the tainted node, and is
// cancelled when the taint goes first (event TaintManagerEviction "Cancelling deletion of Pod
// <ns>/<name>"). Deleting writes the pod's DisruptionTarget condition (DeletionByTaintManager)
// first, and the event "Marking for deletion Pod <ns>/<name>".
//
// Kubernetes' controller watches every pod. Nodes with NoExecute taints are rare, so here the
// shared Node informer says which nodes have them, and only those nodes' pods are watched, each
// node by an informer of its own (field selector spec.nodeName=<node>), stopped when its taints
// go: a cluster without failing nodes costs nothing but the Node informer.
import { DeletedFinalStateUnknown, Informer } from '../client/informer.js';
import { EventRecorder } from '../client/events.js';
import { nopLogger, type Logger } from '../client/log.js';
import { isNotFound, type RESTClient } from '../client/rest.js';
import { ResourceClient } from '../client/resources.js';
import { PODS } from './podwatch.js';
import { informerOf, withClient, type ControllerDescriptor } from './context.js';

const NODES = { group: '', version: 'v1', resource: 'nodes' };

/** whether a toleration tolerates a taint (v1 Toleration.ToleratesTaint) */
export function tolerates(t: any, taint: any): boolean {
  if (t?.effect && t.effect !== taint.effect) return false;
  if (t?.key && t.key !== taint.key) return false;
  // (an empty key tolerates every key only with Exists: validation allows no other)
  switch (t?.operator ?? 'Equal') {
    case 'Exists':
      return true;
    case 'Equal':
    case '':
      return (t?.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

/**
 * When a pod on a node with these NoExecute taints is to be deleted, in ms from now: 0 at once
 * (a taint it does not tolerate, or a toleration of 0 s or less), the least tolerationSeconds of
 * the tolerations it uses, or -1 never (one of them has no tolerationSeconds).
 */
export function evictionDelayMs(pod: any, taints: any[]): number {
  const tolerations: any[] = Array.isArray(pod?.spec?.tolerations) ? pod.spec.tolerations : [];
  const used: any[] = [];
  for (const taint of taints) {
    const t = tolerations.find((x) => tolerates(x, taint));
    if (!t) return 0;
    used.push(t);
  }
  if (used.length === 0) return 0;
  let min = Infinity;
  for (const t of used) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds === null) continue;
    if (t.tolerationSeconds <= 0) return 0;
    min = Math.min(min, t.tolerationSeconds);
  }
  return min === Infinity ? -1 : min * 1000;
}

function noExecuteTaints(node: any): any[] {
  const taints: any[] = Array.isArray(node?.spec?.taints) ? node.spec.taints : [];
  return taints.filter((t) => t?.effect === 'NoExecute');
}

function taintsKey(taints: any[]): string {
  return taints.map((t) => `${t.key}=${t.value ?? ''}`).sort().join(',');
}

export interface TaintEvictionOptions {
  client: RESTClient;
  /** the client of the pod informers (the shared informers' one) */
  informerClient: RESTClient;
  nodes: Informer<any>;
  log?: Logger;
  recorder?: EventRecorder;
}

/** a pod's scheduled deletion */
interface Scheduled {
  timer: NodeJS.Timeout;
  pod: any;
}

export class TaintEviction {
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  /** the nodes with NoExecute taints: their taints and the informer of their pods */
  private readonly watched = new Map<string, { taints: any[]; key: string; pods: Informer<any> }>();
  /** scheduled deletions by pod UID */
  private readonly scheduled = new Map<string, Scheduled>();
  private stopped = false;

  constructor(private readonly o: TaintEvictionOptions) {
    this.log = o.log ?? nopLogger;
    this.recorder = o.recorder ?? new EventRecorder(o.client, 'taint-eviction-controller', this.log);
  }

  async run(signal: AbortSignal): Promise<void> {
    const reg = this.o.nodes.addEventHandler({
      add: (n) => this.syncNode(n.metadata.name, n),
      update: (_, n) => this.syncNode(n.metadata.name, n),
      delete: (n: any | DeletedFinalStateUnknown<any>) => {
        const name = n instanceof DeletedFinalStateUnknown ? n.obj?.metadata?.name : n.metadata?.name;
        if (name) this.syncNode(name, undefined);
      },
    });
    await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
    reg.remove();
    this.stopped = true;
    for (const s of this.scheduled.values()) clearTimeout(s.timer);
    this.scheduled.clear();
    await Promise.all([...this.watched.values()].map((w) => w.pods.stop()));
    this.watched.clear();
  }

  private syncNode(name: string, node: any | undefined): void {
    if (this.stopped) return;
    const taints = noExecuteTaints(node);
    const w = this.watched.get(name);
    if (taints.length === 0) {
      if (!w) return;
      // the taints went: the node's pods are no longer watched, their deletions cancelled
      this.watched.delete(name);
      for (const pod of w.pods.list()) this.cancel(pod, true);
      void w.pods.stop();
      return;
    }
    const key = taintsKey(taints);
    if (w) {
      if (w.key === key) return;
      w.taints = taints;
      w.key = key;
      for (const pod of w.pods.list()) this.processPod(pod, taints);
      return;
    }
    const pods = new Informer<any>(new ResourceClient<any>(this.o.informerClient, PODS), { fieldSelector: `spec.nodeName=${name}`, name: `pods on ${name}`, log: this.log, trimManagedFields: true });
    const entry = { taints, key, pods };
    this.watched.set(name, entry);
    pods.addEventHandler({
      add: (p) => this.processPod(p, entry.taints),
      update: (_, p) => this.processPod(p, entry.taints),
      delete: (p: any) => {
        const pod = p instanceof DeletedFinalStateUnknown ? p.obj : p;
        if (pod?.metadata?.uid) this.cancel(pod, false);
      },
    });
    pods.run();
    this.log.v(2).info('Watching the pods of a node with NoExecute taints', { node: name, taints: key });
  }

  /** schedules (or keeps, or cancels) the deletion of a pod on a node with these NoExecute taints */
  private processPod(pod: any, taints: any[]): void {
    if (this.stopped || pod.metadata?.deletionTimestamp) return;
    const delay = evictionDelayMs(pod, taints);
    if (delay < 0) {
      this.cancel(pod, true);
      return;
    }
    const uid: string = pod.metadata.uid;
    const prev = this.scheduled.get(uid);
    // (a deletion already scheduled keeps its time, unless this one comes sooner)
    if (prev && delay > 0) return;
    if (prev) clearTimeout(prev.timer);
    const timer = setTimeout(() => void this.evict(uid), delay);
    this.scheduled.set(uid, { timer, pod });
  }

  private cancel(pod: any, event: boolean): void {
    const uid: string = pod.metadata?.uid;
    const s = this.scheduled.get(uid);
    if (!s) return;
    clearTimeout(s.timer);
    this.scheduled.delete(uid);
    if (event) {
      const ref = `${pod.metadata.namespace}/${pod.metadata.name}`;
      this.log.info('Cancelling the deletion of a pod', { pod: ref });
      void this.recorder.event({ kind: 'Pod', apiVersion: 'v1', metadata: pod.metadata }, 'Normal', 'TaintManagerEviction', `Cancelling deletion of Pod ${ref}`);
    }
  }

  private async evict(uid: string): Promise<void> {
    const s = this.scheduled.get(uid);
    if (!s || this.stopped) return;
    this.scheduled.delete(uid);
    const { namespace, name } = s.pod.metadata;
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
    this.log.info('Deleting pod', { controller: 'taint-eviction-controller', pod: `${namespace}/${name}` });
    void this.recorder.event({ kind: 'Pod', apiVersion: 'v1', metadata: s.pod.metadata }, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${namespace}/${name}`);
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const pod = await this.o.client.json({ method: 'GET', path });
        if (pod.metadata?.uid !== uid) return;
        const conds: any[] = pod.status?.conditions ?? [];
        const has = conds.some((c) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason === 'DeletionByTaintManager');
        if (!has) {
          const condition = { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint', lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') };
          await this.o.client.json({
            method: 'PATCH', path: `${path}/status`, contentType: 'application/strategic-merge-patch+json',
            body: { metadata: { uid }, status: { conditions: [condition] } },
          });
        }
        await this.o.client.json({ method: 'DELETE', path, body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid } } });
        return;
      } catch (e) {
        if (isNotFound(e) || this.stopped) return;
        if (attempt === 4) this.log.error(e, 'Failed to delete a pod on a node with NoExecute taints', { pod: `${namespace}/${name}` });
        else await new Promise((r) => setTimeout(r, 10));
      }
    }
  }
}

export const taintEvictionControllerDescriptor: ControllerDescriptor = {
  name: 'taint-eviction-controller',
  async run(ctx) {
    // (the node-controller's credentials, as kube-controller-manager's taint manager uses them)
    await withClient(ctx, 'node-controller', undefined, async (client) => {
      await new TaintEviction({ client, informerClient: ctx.informerClient, nodes: informerOf<any>(ctx, NODES), log: ctx.log, recorder: new EventRecorder(client, 'taint-eviction-controller', ctx.log) }).run(ctx.signal);
    });
  },
};
