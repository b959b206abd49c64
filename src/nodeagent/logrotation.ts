// The rotation of the containers' log files (kubelet's ContainerLogManager): every
// containerLogMonitorInterval (10 s) the running containers' log files (the runtime's logPath)
// are looked at, and one larger than containerLogMaxSize (10Mi) is rotated:
//   - leftovers of an interrupted rotation (`*.tmp`, and a file whose `.gz` was finished) are removed;
//   - of the rotated files (`<log>.<YYYYMMDD-hhmmss>`, compressed: `.gz`), the oldest go until
//     containerLogMaxFiles - 2 remain (with the current file and the one this rotation makes:
//     containerLogMaxFiles);
//   - those are gzipped (the one this rotation makes stays plain until the next: a reader
//     following the log may still be finishing it);
//   - the log is renamed `<log>.<time>` and the runtime told to reopen it (CRI ReopenContainerLog);
//     when the runtime cannot, the rename is undone.
// So a container's logs take at most about containerLogMaxFiles x containerLogMaxSize on disk, and
// `kubectl logs -f` goes on across a rotation (logs.ts follows the new file). The containers are
// handled containerLogMaxWorkers at a time.
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Logger } from '../client/log.js';

export interface LogRotationRuntime {
  /** the running containers, with their log files ('' when the runtime keeps none) */
  runningContainers(): Promise<{ id: string; logPath: string }[]>;
  reopenContainerLog(id: string): Promise<void>;
}

export interface LogRotationOptions {
  runtime: LogRotationRuntime;
  maxSizeBytes: number;
  maxFiles: number;
  monitorIntervalMs: number;
  maxWorkers: number;
  log: Logger;
  now?: () => Date;
}

/** the kubelet's suffix of a rotated log: the time of the rotation, `20060102-150405` */
function stamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

export class ContainerLogManager {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(private readonly o: LogRotationOptions) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.rotateAll()
        .catch((e) => this.o.log.error(e, 'Failed to rotate container logs'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.o.monitorIntervalMs);
        });
    };
    this.timer = setTimeout(tick, this.o.monitorIntervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** one pass over the running containers */
  async rotateAll(): Promise<void> {
    const containers = await this.o.runtime.runningContainers();
    let next = 0;
    const worker = async () => {
      while (next < containers.length && !this.stopped) {
        const c = containers[next++]!;
        if (!c.logPath) continue;
        try {
          await this.rotateIfNeeded(c.id, c.logPath);
        } catch (e) {
          this.o.log.error(e, 'Failed to rotate log for container', { path: c.logPath, containerID: c.id });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.o.maxWorkers) }, worker));
  }

  private async rotateIfNeeded(id: string, path: string): Promise<void> {
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch {
      // (the runtime has not written it yet, or the container is gone)
      return;
    }
    if (size < this.o.maxSizeBytes) return;
    const dir = dirname(path);
    const base = basename(path);
    // leftovers of an earlier rotation cut short
    const names = (await readdir(dir)).filter((n) => n.startsWith(`${base}.`));
    const present = new Set(names);
    const leftover = (n: string) => n.endsWith('.tmp') || (!n.endsWith('.gz') && present.has(`${n}.gz`));
    for (const n of names) if (leftover(n)) await unlink(join(dir, n)).catch(() => undefined);
    // the rotated files, oldest first (their names sort by time)
    let rotated = names.filter((n) => !leftover(n)).sort();
    // beside the current file (and the one this rotation makes) at most maxFiles - 1 are kept
    const excess = rotated.length - (this.o.maxFiles - 2);
    for (const n of rotated.slice(0, Math.max(0, excess))) await unlink(join(dir, n)).catch(() => undefined);
    rotated = rotated.slice(Math.max(0, excess));
    // the rotated files are compressed (the one made now waits for the next rotation)
    for (const n of rotated) if (!n.endsWith('.gz')) await this.compress(join(dir, n));
    // the current file moves aside, and the runtime opens a new one
    const to = `${path}.${stamp(this.o.now?.() ?? new Date())}`;
    await rename(path, to);
    try {
      await this.o.runtime.reopenContainerLog(id);
    } catch (e) {
      await rename(to, path).catch(() => undefined);
      throw new Error(`failed to reopen container log ${JSON.stringify(id)}: ${(e as Error).message}`);
    }
    this.o.log.v(4).info('Rotated the log of a container', { containerID: id, path, to });
  }

  private async compress(file: string): Promise<void> {
    const tmp = `${file}.gz.tmp`;
    await pipeline(createReadStream(file), createGzip(), createWriteStream(tmp));
    await rename(tmp, `${file}.gz`);
    await unlink(file);
  }
}
