// The logger every client-side component takes: structurally the same as the API server's and
// klog's adapter (info / warn / error / v(level)), so one object serves both. Components log
// through it and never write to the console themselves.

export interface Logger {
  info(msg: string, kv?: Record<string, unknown>): void;
  warn(msg: string, kv?: Record<string, unknown>): void;
  error(err: unknown, msg: string, kv?: Record<string, unknown>): void;
  v(level: number): { info(msg: string, kv?: Record<string, unknown>): void; enabled: boolean };
}

const quiet = { info() {}, enabled: false };

/** A logger that drops everything (the default of every component). */
export const nopLogger: Logger = {
  info() {},
  warn() {},
  error() {},
  v: () => quiet,
};
