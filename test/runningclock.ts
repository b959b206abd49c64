// Waits in tests measured on the time the test process could run, and what a stuck process was doing.
import { readFileSync } from 'node:fs';

/**
 * The time this process could run since the clock was made: wall time, less what exceeds a second in
 * any stretch without a timer firing. Such a stretch means the machine or this process was frozen
 * (a CI run had two starts time out with the server's log cut off within its first second, as if
 * nothing had run for 30 s), and a process started just before it had no chance to move. A wait measured on this clock fails a slow server, not a frozen machine;
 * describe() says how much time was set aside.
 */
export class RunningClock {
  private last = performance.now();
  private running = 0;
  private frozen = 0;
  private longest = 0;
  private readonly timer: NodeJS.Timeout;
  constructor() {
    this.timer = setInterval(() => this.tick(), 100);
    this.timer.unref();
  }
  private tick(): void {
    const now = performance.now();
    const d = now - this.last;
    this.last = now;
    this.running += Math.min(d, 1000);
    if (d > 1000) this.frozen += d - 1000;
    this.longest = Math.max(this.longest, d);
  }
  /** milliseconds of running time */
  elapsed(): number {
    this.tick();
    return this.running;
  }
  describe(): string {
    return `${Math.round(this.running)} ms running, ${Math.round(this.frozen)} ms frozen, longest stretch without a timer ${Math.round(this.longest)} ms`;
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

/** A process's state, CPU time and kernel wait channel, from /proc (for a start that times out). */
export function processState(pid: number | undefined): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]);
    let wchan = '';
    try {
      wchan = readFileSync(`/proc/${pid}/wchan`, 'utf8');
    } catch {
      /* not every kernel shows it */
    }
    return `pid ${pid} state ${f[0]}, ${ticks * 10} ms CPU${wchan && wchan !== '0' ? `, waiting in ${wchan}` : ''}; load ${readFileSync('/proc/loadavg', 'utf8').trim()}`;
  } catch (e) {
    return `pid ${pid}: ${(e as Error).message}`;
  }
}
