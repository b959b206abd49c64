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
// kept, and closed again once no pod waits for such an event. A cluster where nothing waits pays
// nothing; one where pods wait pays one watch event per bound pod that comes or goes.
//
// The watch starts at the resourceVersion of the list the failed decision was made on (the
// scheduling pass's list of bound pods), so that a pod that went away between that list and the
// watch is still seen: its event is replayed. When that version is too old (410), or the watch
// failed, it starts again at the current version and moves the waiting pods once, since an event
// may have been missed. MODIFIED events (a bound pod's status, mostly) move nothing: the
// queue's periodic recheck covers a label change (Kubernetes filters those updates with its
// queueing hints).
import type { Logger } from '../client/log.js';
import { isResourceExpired, type RESTClient } from '../client/rest.js';
import { ResourceClient } from '../client/resources.js';
import { sleep } from '../client/flowcontrol.js';

const PODS = { group: '', version: 'v1', resource: 'pods' };

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
  /** the server's longest watch, before the watch is opened again (default 5 to 10 min, as informers) */
  timeoutSeconds?: number;
}

export class AssignedPodWatch {
  private running = false;
  private stopped = false;
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  /** watches opened, and events that moved pods (for tests and logs) */
  readonly stats = { watches: 0, added: 0, removed: 0, restarts: 0 };

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

  get active(): boolean {
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.loop?.catch(() => undefined);
  }

  private async currentVersion(): Promise<string> {
    const l = await new ResourceClient<any>(this.o.client, PODS).listMetadata({ fieldSelector: this.o.fieldSelector, limit: 1, signal: this.abort.signal });
    return l.metadata?.resourceVersion ?? '';
  }

  private async run(from: string | undefined): Promise<void> {
    const pods = new ResourceClient<any>(this.o.client, PODS);
    const signal = this.abort.signal;
    let rv = from ?? '';
    let missed = false;
    for (;;) {
      if (this.stopped || !this.o.needed()) {
        // at once, in the same step as the check: a pod that comes to wait after it starts a new watch
        this.running = false;
        break;
      }
      try {
        if (!rv || missed) {
          rv = await this.currentVersion();
          // (anything between the decision and now is unknown: the waiting pods are tried again)
          if (missed) {
            this.stats.restarts++;
            this.o.added();
            this.o.removed();
          }
          missed = false;
          continue;
        }
        const timeoutSeconds = this.o.timeoutSeconds ?? Math.floor(300 * (1 + Math.random()));
        this.stats.watches++;
        const w = await pods.watch({ resourceVersion: rv, fieldSelector: this.o.fieldSelector, metadataOnly: true, allowWatchBookmarks: true, timeoutSeconds, signal });
        this.o.log.v(4).info('Watching bound pods for the pods that wait on them', { resourceVersion: rv });
        try {
          for await (const ev of w) {
            const v = ev.object?.metadata?.resourceVersion;
            if (typeof v === 'string' && v) rv = v;
            const uid = typeof ev.object?.metadata?.uid === 'string' ? ev.object.metadata.uid : undefined;
            if (ev.type === 'ADDED') {
              this.stats.added++;
              this.o.added(uid);
            } else if (ev.type === 'DELETED') {
              this.stats.removed++;
              this.o.removed(uid);
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
