// Loaded into the Keelson process by bench/run.ts (node --expose-gc --import <this file>), only to
// read its heap from outside: on SIGUSR2 it collects garbage and writes process.memoryUsage() as
// JSON to $KEELSON_BENCH_MEMFILE. With $KEELSON_BENCH_PEAK_MS set (the biglist phase), it also
// samples process.memoryUsage() at that interval and adds the highest heapUsed, external and rss
// seen since the previous SIGUSR2 (`peak`), then starts over. It changes nothing else in the
// process it is loaded into.
import { writeFileSync } from 'node:fs';

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
