// Loaded into the Keelson process by bench/run.ts (node --expose-gc --import <this file>), only to
// read the process from outside:
// - on SIGUSR2 it collects garbage and writes process.memoryUsage() as JSON to
//   $KEELSON_BENCH_MEMFILE. With $KEELSON_BENCH_PEAK_MS set (the biglist phase), it also samples
//   process.memoryUsage() at that interval and adds the highest heapUsed, external and rss seen
//   since the previous SIGUSR2 (`peak`), then starts over.
// - when run.ts spawned it with an IPC channel, it answers the message 'loop' with the main
//   thread's event-loop utilization so far (active and idle ms) and the garbage collector's pauses
//   so far (ms, minor and major), which run.ts reads at both ends of a measured window: whether
//   the event loop was saturated, and how much of it went to collection.
// - on the message { snapshot: <path> } it writes a heap snapshot there (v8.writeHeapSnapshot, which
//   collects garbage first and stops the process meanwhile) and answers { snapshotWritten: <path> }
//   (bench/heapdiff.ts).
// - on the message { allocations: 'start' } it starts V8's sampling heap profiler (one sample per
//   4 KiB allocated on average, every allocation counted, those collected since too) and answers
//   { allocationsStarted: true }; on { allocations: <path> } it stops and writes the profile there
//   and answers { allocationsWritten: <path> } (bench/allocations.ts).
// It changes nothing else in the process it is loaded into (the channel is unreferenced: it keeps
// nothing alive).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { writeHeapSnapshot } from 'node:v8';
import { constants, performance, PerformanceObserver } from 'node:perf_hooks';

/** what the probe answers to 'loop' */
export interface LoopSnapshot {
  /** ms since the process started, of the event loop running and of it waiting */
  activeMs: number;
  idleMs: number;
  /** ms the main thread spent paused for garbage collection since the probe loaded */
  gcMinorMs: number;
  gcMajorMs: number;
}

const out = process.env.KEELSON_BENCH_MEMFILE;
const peakMs = Number(process.env.KEELSON_BENCH_PEAK_MS ?? 0);
if (out) {
  let peak: { heapUsed: number; external: number; rss: number } | undefined;
  if (peakMs > 0) {
    peak = { heapUsed: 0, external: 0, rss: 0 };
    setInterval(() => {
      const m = process.memoryUsage();
      peak!.heapUsed = Math.max(peak!.heapUsed, m.heapUsed);
      peak!.external = Math.max(peak!.external, m.external);
      peak!.rss = Math.max(peak!.rss, m.rss);
    }, peakMs).unref();
  }
  process.on('SIGUSR2', () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc) {
      gc();
      gc();
    }
    const m = process.memoryUsage();
    writeFileSync(out, JSON.stringify({ ...m, ...(peak ? { peak: { ...peak } } : {}), at: Date.now() }));
    if (peak) peak = Object.assign(peak, { heapUsed: m.heapUsed, external: m.external, rss: m.rss });
  });
}

if (process.send && process.channel) {
  let gcMinorMs = 0;
  let gcMajorMs = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = ((e as { detail?: unknown }).detail as { kind?: number } | undefined)?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) gcMinorMs += e.duration;
      else gcMajorMs += e.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  let session: Session | undefined;
  const post = (method: string, params: object = {}) =>
    new Promise<any>((res, rej) => session!.post(method, params, (err, result) => (err ? rej(err) : res(result))));
  process.on('message', async (m) => {
    const allocations = m && typeof m === 'object' ? (m as { allocations?: unknown }).allocations : undefined;
    if (allocations === 'start') {
      if (!session) {
        session = new Session();
        session.connect();
      }
      await post('HeapProfiler.enable');
      await post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      process.send!({ allocationsStarted: true });
      return;
    }
    if (typeof allocations === 'string' && session) {
      const { profile } = await post('HeapProfiler.stopSampling');
      writeFileSync(allocations, JSON.stringify(profile));
      process.send!({ allocationsWritten: allocations });
      return;
    }
    const snapshot = m && typeof m === 'object' ? (m as { snapshot?: unknown }).snapshot : undefined;
    if (typeof snapshot === 'string') {
      process.send!({ snapshotWritten: writeHeapSnapshot(snapshot) });
      return;
    }
    if (m !== 'loop') return;
    const u = performance.eventLoopUtilization();
    const snap: LoopSnapshot = { activeMs: u.active, idleMs: u.idle, gcMinorMs, gcMajorMs };
    process.send!(snap);
  });
  process.channel.unref();
}
