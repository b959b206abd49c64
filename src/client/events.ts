// An event recorder as client-go's legacy one (tools/record) writes core/v1 Events: named
// <object>.<hex of the time in ns>, the involved object's reference, the source and the reporting
// component. Its correlation is the simple one: the same event again (same object, type, reason
// and message) raises the count and lastTimestamp of the event already written, by a merge patch,
// instead of writing another; an event it cannot patch (expired, deleted) is written anew.
import type { Logger } from './log.js';
import type { RESTClient } from './rest.js';
import { ResourceClient } from './resources.js';

const EVENTS = { group: '', version: 'v1', resource: 'events' };
/** events remembered for correlation (client-go's cache holds 4096) */
const MAX_REMEMBERED = 4096;

function rfc3339Seconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export class EventRecorder {
  private readonly written = new Map<string, { name: string; namespace: string; count: number }>();

  constructor(
    /** none: the events are only logged (a kubelet in standalone mode: "No api server defined") */
    private readonly client: RESTClient | undefined,
    /** source.component and reportingComponent: `kube-controller-manager`, `controllermanager` */
    private readonly component: string,
    private readonly log: Logger,
    /** source.host and reportingInstance: the node of a kubelet's events */
    private readonly host = '',
  ) {}

  /** the writes of one key, one after the other (so that a repeat finds the event written before) */
  private readonly chains = new Map<string, Promise<void>>();

  /** record an event about `obj` (which carries its kind and apiVersion); never rejects */
  event(obj: any, type: 'Normal' | 'Warning', reason: string, message: string, fieldPath?: string): Promise<void> {
    const md = obj?.metadata ?? {};
    const involved: Record<string, unknown> = { kind: obj?.kind, namespace: md.namespace, name: md.name, uid: md.uid, apiVersion: obj?.apiVersion, resourceVersion: md.resourceVersion };
    if (fieldPath) involved.fieldPath = fieldPath;
    const key = JSON.stringify([involved.kind, md.namespace, md.name, md.uid, involved.apiVersion, fieldPath, type, reason, message]);
    const run = (this.chains.get(key) ?? Promise.resolve()).then(() => this.write(key, md, involved, type, reason, message));
    this.chains.set(key, run);
    void run.then(() => {
      if (this.chains.get(key) === run) this.chains.delete(key);
    });
    return run;
  }

  private async write(key: string, md: any, involved: Record<string, unknown>, type: string, reason: string, message: string): Promise<void> {
    if (!this.client) {
      this.log.v(3).info('Event', { object: `${md.namespace ? `${md.namespace}/` : ''}${md.name}`, type, reason, message });
      return;
    }
    const client = this.client;
    const namespace: string = md.namespace || 'default';
    const ms = Date.now();
    const now = rfc3339Seconds(ms);
    const events = new ResourceClient<any>(client, EVENTS, namespace);
    const prev = this.written.get(key);
    try {
      if (prev) {
        prev.count++;
        await client.json({
          method: 'PATCH',
          path: `/api/v1/namespaces/${encodeURIComponent(prev.namespace)}/events/${encodeURIComponent(prev.name)}`,
          body: Buffer.from(JSON.stringify({ count: prev.count, lastTimestamp: now })),
          contentType: 'application/merge-patch+json',
        });
        return;
      }
    } catch {
      // gone (expired or deleted): written anew below
      this.written.delete(key);
    }
    const nanos = BigInt(ms) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
    const name = `${md.name}.${nanos.toString(16)}`;
    try {
      await events.create({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: involved,
        reason,
        message,
        source: { component: this.component, ...(this.host ? { host: this.host } : {}) },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        type,
        reportingComponent: this.component,
        reportingInstance: this.host,
      });
      if (this.written.size >= MAX_REMEMBERED) this.written.delete(this.written.keys().next().value!);
      this.written.set(key, { name, namespace, count: 1 });
    } catch (e) {
      this.log.error(e, 'Server rejected event (will not retry!)', { event: `${namespace}/${name}`, reason });
    }
  }
}
