// The kubelet's streamingConnectionIdleTimeout (--streaming-connection-idle-timeout, 4h by
// default; 0: none) over the streams the kubelet holds: the client's side of every /exec, /attach
// and /portForward it proxies to the runtime's streaming server (SPDY or WebSocket, server.ts'
// proxyTo). A stream that has carried no byte either way for the timeout is closed: the client's
// connection is destroyed, and with it the runtime's (the proxy's splice closes the other side).
// Every byte counts, the protocols' pings too (as spdystream's idle timer counts every frame).
//
// In Kubernetes the kubelet took this setting to its own streaming server, which served streams
// for dockershim; with a CRI runtime the kubelet only proxies, and the runtime's streaming server
// has its own idle timeout (containerd's stream_idle_timeout, also 4h). Keelson's kubelet applies
// the setting to the streams it proxies, so the option means what its help says whatever the runtime.
//
// Nothing is done per chunk: the sockets' own byte counters (bytesRead + bytesWritten) are read on
// one coarse timer for all streams (a tenth of the timeout, between 50 ms and 30 s), which runs
// only while there are streams. A stream is closed once its counters have stood still for the
// whole timeout, so never early, and at most two periods late.
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../client/log.js';
import { goFormatDuration } from '../machinery/gostrings.js';

interface Tracked {
  sock: Socket;
  /** bytesRead + bytesWritten when last looked at */
  seen: number;
  /** when they last moved (performance.now()) */
  last: number;
  /** what the log names it by */
  what: Record<string, unknown>;
}

export class IdleStreams {
  private readonly streams = new Set<Tracked>();
  private ticker: NodeJS.Timeout | undefined;
  readonly periodMs: number;

  constructor(
    /** the idle timeout, ms (0 or less: streams are never closed for idleness) */
    readonly timeoutMs: number,
    private readonly log?: Logger,
  ) {
    this.periodMs = Math.min(30_000, Math.max(50, Math.floor(timeoutMs / 10)));
  }

  /** the number of streams watched now */
  get size(): number {
    return this.streams.size;
  }

  /** watches `sock`, a stream's client connection, until it closes; `what` names it in the log */
  track(sock: Socket, what: Record<string, unknown> = {}): void {
    if (this.timeoutMs <= 0 || sock.destroyed) return;
    const t: Tracked = { sock, seen: counted(sock), last: performance.now(), what };
    this.streams.add(t);
    sock.once('close', () => this.forget(t));
    if (!this.ticker) {
      this.ticker = setInterval(() => this.sweep(), this.periodMs);
      this.ticker.unref();
    }
  }

  /** stops watching (the streams stay open) */
  stop(): void {
    this.streams.clear();
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
  }

  private forget(t: Tracked): void {
    this.streams.delete(t);
    if (this.streams.size === 0 && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  private sweep(): void {
    const now = performance.now();
    for (const t of this.streams) {
      const n = counted(t.sock);
      if (n !== t.seen) {
        t.seen = n;
        t.last = now;
        continue;
      }
      if (now - t.last < this.timeoutMs) continue;
      this.log?.v(2).info('Closing an idle streaming connection', { ...t.what, idleTimeout: goFormatDuration(BigInt(this.timeoutMs) * 1_000_000n) });
      this.forget(t);
      t.sock.destroy();
    }
  }
}

/** the bytes the socket has read and written (plain text for TLS; pending writes included) */
function counted(sock: Socket): number {
  return (sock.bytesRead ?? 0) + (sock.bytesWritten ?? 0);
}
