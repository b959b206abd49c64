// What every daemon command shares around its work: its logger (klog, behind the Logger interface
// the components take) and its end on SIGTERM or SIGINT.
import * as klog from './klog.js';
import type { Logger } from '../client/log.js';

/** the components' Logger over klog; each line names the component's own caller */
export function daemonLogger(): Logger {
  const l = klog.log.withCallDepth(1);
  return {
    info: (msg, kv) => l.info(msg, kv),
    warn: (msg, kv) => l.warn(msg, kv),
    error: (err, msg, kv) => l.error(err, msg, kv),
    // (a Verbose logger's info is called by the component's code itself, not through this adapter:
    // no frame to skip, or every -v line names its caller's caller)
    v: (level) => klog.log.v(level),
  };
}

/**
 * On SIGTERM or SIGINT: `shutdown`, then exit 0 (1 when it fails); a second signal exits at once
 * with 1.
 */
export function exitOnSignals(log: Logger, shutdown: () => Promise<void>): void {
  let stopping = false;
  const stop = (sig: string) => {
    if (stopping) {
      log.warn('Second signal received, exiting immediately', { signal: sig });
      process.exit(1);
    }
    stopping = true;
    log.info('Received signal, shutting down', { signal: sig });
    shutdown().then(
      () => process.exit(0),
      (e) => {
        log.error(e, 'Shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
