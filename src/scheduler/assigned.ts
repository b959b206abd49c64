// The bound pods' comings and goings, watched only while a waiting pod could be helped by them.
//
// Kubernetes' scheduler sees every pod through its informer, and a bound pod that is added or goes
// away (AssignedPodAdd, AssignedPodDelete) moves the unschedulable pods whose failure it may
// resolve: room freed on a node (NodeResourcesFit, NodePorts), an anti-affinity or a spread skew
// that no longer holds, a pod that a required affinity names now running (InterPodAffinity,
// PodTopologySpread). This scheduler keeps no informer over the bound pods (scheduler.ts says why),
// so it opens a watch of its own for those events when a pod waits in the queue for one of them:
// metadata only (PartialObjectMetadata: nothing of the pods is decoded beyond their metadata), with
// the bound-pod field selector (a pod that terminates or is deleted leaves it: DELETED), nothing
// kept but each bound pod's labels, and closed again once no pod waits for such an event. A
// cluster where nothing waits pays nothing; one where pods wait pays a metadata list of the bound
// pods when the watch starts, and one watch event per write of a bound pod.
//
// The watch starts at the resourceVersion of the list the failed decision was made on (the
// scheduling pass's list of bound pods), so that a pod that went away between that list and the
// watch is still seen: its event is replayed. When that version is too old (410), or the watch
// failed, it starts again at the current version and moves the waiting pods once, since an event
// may have been missed. A MODIFIED event moves the waiting pods only when the bound pod's labels
// changed (AssignedPodUpdate with UpdatePodLabel, as Kubernetes' queueing hints tell it from a
// status write): the labels of the bound pods are kept while the watch runs, from a metadata list
// when it starts. A bound pod shrinking in place (UpdatePodScaleDown) cannot be told from its
// metadata alone: a resize changes its spec (metadata.generation goes up) and the room is freed
// only when the node writes the resized requests into its status (the scheduler counts the larger
// of the two until then). So every write of a bound pod whose generation is above 1 (its spec has
// changed since its creation) moves the pods that wait for room, as a removal does: that takes in
// the resize itself and the status writes that follow it, and costs no more than a scheduling
// attempt where the write freed nothing. A bound pod that was never changed moves nothing.
import type { Logger } from '../client/log.js';
import { isResourceExpired, type RESTClient } from '../client/rest.js';
import { ResourceClient } from '../client/resources.js';
import { sleep } from '../client/flowcontrol.js';

const PODS = { group: '', version: 'v1', resource: 'pods' };

/** a pod's labels, as a text that compares */
function labelsOf(p: any): string {
  const l = p?.metadata?.labels ?? {};
  return JSON.stringify(Object.keys(l).sort().map((k) => [k, l[k]]));
}

export interface AssignedPodWatchOptions {
  client: RESTClient;
  /** the field selector of the bound, not terminated pods */
  fieldSelector: string;
  log: Logger;
  /** a pod is waiting for such events (checked after every event and before every (re)start) */
  needed: () => boolean;
  /** a bound pod was added, by uid (or an event may have been missed: both then, without) */
  added: (uid?: string) => void;
  /** a bound pod went away */
  removed: (uid?: string) => void;
  /** a bound pod's labels changed (AssignedPodUpdate) */
  relabeled: (uid: string) => void;
  /**
   * a bound pod whose spec changed after its creation (metadata.generation above 1: an in-place
   * resize is the change that matters here) was written: its requests may have shrunk
   */
  resized: (uid: string) => void;
  /** the server's longest watch, before the watch is opened again (default 5 to 10 min, as informers) */
  timeoutSeconds?: number;
}

export class AssignedPodWatch {
  private running = false;
  private stopped = false;
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  /** the labels of the bound pods, by uid, while a watch runs (seeded by a metadata list when it starts) */
  private labels = new Map<string, string>();

  constructor(private readonly o: AssignedPodWatchOptions) {}

  /**
   * a pod now waits for a bound pod to come or go: watch from `resourceVersion` (the version its
   * decision read), unless a watch already runs
   */
  ensure(resourceVersion: string | undefined): void {
    if (this.running || this.stopped) return;
    this.running = true;
    this.loop = this.run(resourceVersion);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.loop?.catch(() => undefined);
  }

  /** the bound pods' labels now, to tell a label change from a status write (and the list's version) */
  private async seedLabels(): Promise<string> {
    const l = await new ResourceClient<any>(this.o.client, PODS).listAll({ fieldSelector: this.o.fieldSelector, metadataOnly: true, signal: this.abort.signal });
    this.labels = new Map();
    for (const p of l.items ?? []) if (typeof p?.metadata?.uid === 'string') this.labels.set(p.metadata.uid, labelsOf(p));
    return l.metadata?.resourceVersion ?? '';
  }

  private async run(from: string | undefined): Promise<void> {
    const pods = new ResourceClient<any>(this.o.client, PODS);
    const signal = this.abort.signal;
    let rv = from ?? '';
    let missed = false;
    try {
      const seeded = await this.seedLabels();
      rv ||= seeded;
    } catch {
      missed = true;
    }
    for (;;) {
      if (this.stopped || !this.o.needed()) {
        // at once, in the same step as the check: a pod that comes to wait after it starts a new watch
        this.running = false;
        this.labels = new Map();
        break;
      }
      try {
        if (!rv || missed) {
          rv = await this.seedLabels();
          // (anything between the decision and now is unknown: the waiting pods are tried again)
          if (missed) {
            this.o.added();
            this.o.removed();
          }
          missed = false;
          continue;
        }
        const timeoutSeconds = this.o.timeoutSeconds ?? Math.floor(300 * (1 + Math.random()));
        const w = await pods.watch({ resourceVersion: rv, fieldSelector: this.o.fieldSelector, metadataOnly: true, allowWatchBookmarks: true, timeoutSeconds, signal });
        this.o.log.v(4).info('Watching bound pods for the pods that wait on them', { resourceVersion: rv });
        try {
          for await (const ev of w) {
            const v = ev.object?.metadata?.resourceVersion;
            if (typeof v === 'string' && v) rv = v;
            const uid = typeof ev.object?.metadata?.uid === 'string' ? ev.object.metadata.uid : undefined;
            if (ev.type === 'ADDED') {
              if (uid) this.labels.set(uid, labelsOf(ev.object));
              this.o.added(uid);
            } else if (ev.type === 'DELETED') {
              if (uid) this.labels.delete(uid);
              this.o.removed(uid);
            } else if (ev.type === 'MODIFIED' && uid) {
              // (most writes of a bound pod are its status: what matters is a change of its labels,
              // or a write of a pod whose spec has changed since its creation)
              const now = labelsOf(ev.object);
              const before = this.labels.get(uid);
              this.labels.set(uid, now);
              if (before !== undefined && before !== now) {
                this.o.relabeled(uid);
              } else if (Number(ev.object?.metadata?.generation) > 1) {
                this.o.resized(uid);
              }
            }
            if (!this.o.needed()) break;
          }
        } finally {
          w.stop();
        }
        if (w.endedBy instanceof Error) missed = true;
      } catch (e) {
        if (this.stopped) {
          this.running = false;
          this.labels = new Map();
          return;
        }
        if (!isResourceExpired(e)) {
          this.o.log.v(2).info('Watch of bound pods failed; starting again', { err: (e as Error).message });
          await sleep(1000, signal).catch(() => undefined);
        }
        missed = true;
      }
    }
    this.o.log.v(4).info('No pod waits on bound pods; their watch is closed');
  }
}
