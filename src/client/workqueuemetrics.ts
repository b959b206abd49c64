// client-go's work queue metrics, as kube-controller-manager serves them on /metrics, labelled by
// the queue's name (the controller's: `deployment`, `replicaset`, `garbage_collector_attempt_to_delete`, ...):
//   workqueue_adds_total, workqueue_depth, workqueue_retries_total,
//   workqueue_queue_duration_seconds (from add to a worker's get) and
//   workqueue_work_duration_seconds (from get to done), in client-go's buckets (10 ns to 10 s, by tens),
//   workqueue_unfinished_work_seconds and workqueue_longest_running_processor_seconds (the items
//   being processed now; computed when scraped, where client-go updates them every 500 ms).
import client from 'prom-client';
import type { WorkQueueMetrics, WorkQueueMetricsProvider } from './workqueue.js';

const BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10];

export function workQueueMetricsProvider(registry: client.Registry): WorkQueueMetricsProvider {
  /** the items being processed, by queue name: when each was taken (ms) */
  const processing = new Map<string, Map<unknown, number>[]>();
  const adds = new client.Counter({ name: 'workqueue_adds_total', help: '[ALPHA] Total number of adds handled by workqueue', labelNames: ['name'], registers: [registry] });
  const depth = new client.Gauge({ name: 'workqueue_depth', help: '[ALPHA] Current depth of workqueue', labelNames: ['name'], registers: [registry] });
  const retries = new client.Counter({ name: 'workqueue_retries_total', help: '[ALPHA] Total number of retries handled by workqueue', labelNames: ['name'], registers: [registry] });
  const queued = new client.Histogram({ name: 'workqueue_queue_duration_seconds', help: '[ALPHA] How long in seconds an item stays in workqueue before being requested.', labelNames: ['name'], buckets: BUCKETS, registers: [registry] });
  const work = new client.Histogram({ name: 'workqueue_work_duration_seconds', help: '[ALPHA] How long in seconds processing an item from workqueue takes.', labelNames: ['name'], buckets: BUCKETS, registers: [registry] });
  /** a gauge computed when scraped from the start times (ms) of each queue's items in process */
  const fromProcessing = (name: string, help: string, value: (starts: number[], now: number) => number) =>
    new client.Gauge({
      name,
      help,
      labelNames: ['name'],
      registers: [registry],
      collect() {
        const now = performance.now();
        for (const [queue, maps] of processing) {
          const starts: number[] = [];
          for (const m of maps) for (const t of m.values()) starts.push(t);
          this.set({ name: queue }, value(starts, now) / 1000);
        }
      },
    });
  fromProcessing(
    'workqueue_unfinished_work_seconds',
    "[ALPHA] How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
    (starts, now) => starts.reduce((sum, t) => sum + (now - t), 0),
  );
  fromProcessing('workqueue_longest_running_processor_seconds', '[ALPHA] How many seconds has the longest running processor for workqueue been running.', (starts, now) =>
    starts.length ? now - Math.min(...starts) : 0,
  );
  return {
    forQueue(name: string): WorkQueueMetrics {
      const labels = { name };
      const addTimes = new Map<unknown, number>();
      const started = new Map<unknown, number>();
      let list = processing.get(name);
      if (!list) processing.set(name, (list = []));
      list.push(started);
      // (the series exist from the start, at 0, as client-go's)
      adds.inc(labels, 0);
      depth.set(labels, 0);
      retries.inc(labels, 0);
      return {
        add(item) {
          adds.inc(labels);
          depth.inc(labels);
          if (!addTimes.has(item)) addTimes.set(item, performance.now());
        },
        get(item) {
          depth.dec(labels);
          const t = addTimes.get(item);
          if (t !== undefined) {
            queued.observe(labels, (performance.now() - t) / 1000);
            addTimes.delete(item);
          }
          started.set(item, performance.now());
        },
        done(item) {
          const t = started.get(item);
          if (t !== undefined) {
            work.observe(labels, (performance.now() - t) / 1000);
            started.delete(item);
          }
        },
        retry() {
          retries.inc(labels);
        },
      };
    },
  };
}
