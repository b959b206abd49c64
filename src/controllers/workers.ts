// What kube-controller-manager's controllers share: wait for the informers' caches, run some
// workers over a rate-limited queue until the signal aborts, then shut the queue down and wait
// for each worker to finish its current item.
import { setMaxListeners } from 'node:events';
import { DeletedFinalStateUnknown, type Informer } from '../client/informer.js';
import type { Logger } from '../client/log.js';
import { isAlreadyExists, isNotFound } from '../client/rest.js';
import type { RateLimitingQueue } from '../client/workqueue.js';

export interface QueueWorkers<T> {
  /** the controller's words in the start and stop log lines ("namespace controller") */
  name: string;
  log: Logger;
  queue: RateLimitingQueue<T>;
  /** the caches to wait for before the first item */
  informers: Informer<any>[];
  /** handles one item; a throw goes to onError */
  sync: (item: T, signal: AbortSignal) => Promise<void>;
  /** a failed item (default: logged with `failure`, then requeued with backoff) */
  onError?: (item: T, err: unknown, signal: AbortSignal) => void;
  /** the log message of a failed item under the default onError (items are namespaces' names) */
  failure?: string;
}

export async function runQueueWorkers<T>(w: QueueWorkers<T>, workers: number, signal: AbortSignal): Promise<void> {
  // each worker's requests listen on the signal
  setMaxListeners(0, signal);
  w.log.info(`Starting ${w.name}`);
  try {
    const synced = await Promise.all(w.informers.map((i) => i.waitForSync({ signal })));
    if (!synced.every(Boolean)) return;
    const done: Promise<void>[] = [];
    for (let i = 0; i < Math.max(1, workers); i++) done.push(worker(w, signal));
    await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
    w.queue.shutDown();
    await Promise.all(done);
  } finally {
    w.queue.shutDown();
    w.log.info(`Shutting down ${w.name}`);
  }
}

async function worker<T>(w: QueueWorkers<T>, signal: AbortSignal): Promise<void> {
  const onError =
    w.onError ??
    ((item: T, err: unknown) => {
      w.log.error(err, w.failure ?? `${w.name} failed`, { namespace: item });
      w.queue.addRateLimited(item);
    });
  for (;;) {
    const { item, shutdown } = await w.queue.get();
    if (shutdown) return;
    if (signal.aborted) {
      w.queue.done(item);
      return;
    }
    try {
      await w.sync(item, signal);
      w.queue.forget(item);
    } catch (e) {
      onError(item, e, signal);
    } finally {
      w.queue.done(item);
    }
  }
}

// ---- controllers that keep something in every active namespace (service accounts, root CA) ----

/** a namespace being deleted (a deletion timestamp, or phase Terminating): it refuses new content */
export function namespaceTerminating(ns: any): boolean {
  return !!ns?.metadata?.deletionTimestamp || ns?.status?.phase === 'Terminating';
}

/** queues the name of each namespace the informer adds or updates, unless it is being deleted */
export function queueActiveNamespaces(namespaces: Informer<any>, queue: RateLimitingQueue<string>): void {
  const enqueue = (ns: any): void => {
    if (ns instanceof DeletedFinalStateUnknown) return;
    if (namespaceTerminating(ns)) return;
    if (ns?.metadata?.name) queue.add(ns.metadata.name);
  };
  namespaces.addEventHandler({ add: enqueue, update: (_old, ns) => enqueue(ns) });
}

/**
 * A write into a namespace that has nothing left to do: the object was created meanwhile (409),
 * the namespace went away (404), or it is being deleted and refuses new content (403).
 */
export function isMootNamespaceWrite(e: unknown): boolean {
  return isAlreadyExists(e) || isNotFound(e) || (e as { code?: number }).code === 403;
}

// ---- controllers `keelson server` runs in its own process (local-path provisioner, ServiceLB) ----

/**
 * Runs `run` until stop(): stop aborts its signal, waits for it at most 5 s, then closes the
 * client. A run that fails is logged with `failure`. stop() never rejects.
 */
export function runInServer(client: { close(): void }, run: (signal: AbortSignal) => Promise<void>, log: Logger, failure: string): { stop(): Promise<void> } {
  const ac = new AbortController();
  const done = run(ac.signal).catch((e) => log.error(e, failure));
  return {
    async stop() {
      ac.abort();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([done, new Promise<void>((r) => (timer = setTimeout(r, 5000)))]);
      clearTimeout(timer);
      client.close();
    },
  };
}
