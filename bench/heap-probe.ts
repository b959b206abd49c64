// Loaded into the Keelson process by bench/run.ts (node --expose-gc --import <this file>), only to
// read its heap from outside: on SIGUSR2 it collects garbage and writes process.memoryUsage() as
// JSON to $KEELSON_BENCH_MEMFILE. It changes nothing else in the process it is loaded into.
import { writeFileSync } from 'node:fs';

const out = process.env.KEELSON_BENCH_MEMFILE;
if (out) {
  process.on('SIGUSR2', () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc) {
      gc();
      gc();
    }
    writeFileSync(out, JSON.stringify({ ...process.memoryUsage(), at: Date.now() }));
  });
}
