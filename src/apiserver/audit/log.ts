// The audit log backend (--audit-log-*): events written one per line, as JSON (audit.k8s.io/v1
// Event) or in the legacy one-line text form, to standard output ('-') or to a file rotated as
// kube-apiserver's log (lumberjack) rotates it: when a write would take the file past
// --audit-log-maxsize megabytes, the file is renamed to `<name>-<UTC time>.<ext>` and a new one
// begun; backups beyond --audit-log-maxbackup or older than --audit-log-maxage days are removed,
// and with --audit-log-compress the backups are gzipped.
import { stringifyJSON } from '../../codec/int64.js';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync, fstatSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { goQuote } from '../../schema/validation/errs.js';
import type { AuditEvent } from './event.js';

export interface AuditLogOptions {
  /** a file, or '-' for standard output */
  path: string;
  format: 'json' | 'legacy';
  /** days to keep backups (0: no age limit) */
  maxAge: number;
  /** backups to keep (0: all) */
  maxBackups: number;
  /** megabytes before rotation (0: lumberjack's default, 100) */
  maxSize: number;
  compress: boolean;
  mode: 'blocking' | 'blocking-strict' | 'batch';
  batch: { bufferSize: number; maxBatchSize: number; maxBatchWaitMs: number; throttleEnable: boolean; throttleQPS: number; throttleBurst: number };
  truncate: { enabled: boolean; maxEventSize: number; maxBatchSize: number };
}

export const AUDIT_LOG_FORMATS = ['legacy', 'json'] as const;
export const AUDIT_LOG_MODES = ['batch', 'blocking', 'blocking-strict'] as const;

export function defaultAuditLogOptions(): AuditLogOptions {
  return {
    path: '',
    format: 'json',
    maxAge: 0,
    maxBackups: 0,
    maxSize: 0,
    compress: false,
    mode: 'blocking',
    // the log backend's batch defaults: a big buffer, one event per write
    batch: { bufferSize: 10000, maxBatchSize: 1, maxBatchWaitMs: 0, throttleEnable: false, throttleQPS: 0, throttleBurst: 0 },
    truncate: { enabled: false, maxEventSize: 100 * 1024, maxBatchSize: 10 * 1024 * 1024 },
  };
}

/** kube-apiserver's checks of the log options (only when --audit-log-path is set) */
export function validateAuditLogOptions(o: AuditLogOptions): string[] {
  if (!o.path) return [];
  const errs: string[] = [];
  if (!(AUDIT_LOG_MODES as readonly string[]).includes(o.mode)) errs.push(`invalid audit log mode ${o.mode}, allowed modes are "${AUDIT_LOG_MODES.join(',')}"`);
  else if (o.mode === 'batch') {
    if (o.batch.bufferSize <= 0) errs.push(`invalid audit batch log buffer size ${o.batch.bufferSize}, must be a positive number`);
    if (o.batch.maxBatchSize <= 0) errs.push(`invalid audit batch log max batch size ${o.batch.maxBatchSize}, must be a positive number`);
    if (o.batch.throttleEnable) {
      if (o.batch.throttleQPS <= 0) errs.push(`invalid audit batch log throttle QPS ${o.batch.throttleQPS}, must be a positive number`);
      if (o.batch.throttleBurst <= 0) errs.push(`invalid audit batch log throttle burst ${o.batch.throttleBurst}, must be a positive number`);
    }
  }
  if (o.truncate.maxEventSize <= 0) errs.push(`invalid audit truncate log max event size ${o.truncate.maxEventSize}, must be a positive number`);
  else if (o.truncate.maxBatchSize < o.truncate.maxEventSize) errs.push(`invalid audit truncate log max batch size ${o.truncate.maxBatchSize}, must be greater than max event size (${o.truncate.maxEventSize})`);
  if (!(AUDIT_LOG_FORMATS as readonly string[]).includes(o.format)) errs.push(`invalid audit log format ${o.format}, allowed formats are "${AUDIT_LOG_FORMATS.join(',')}"`);
  if (o.maxAge < 0) errs.push(`--audit-log-maxage ${o.maxAge} can't be a negative number`);
  if (o.maxBackups < 0) errs.push(`--audit-log-maxbackup ${o.maxBackups} can't be a negative number`);
  if (o.maxSize < 0) errs.push(`--audit-log-maxsize ${o.maxSize} can't be a negative number`);
  return errs;
}

// ---- the legacy format ----

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Go's time.RFC3339Nano of a time in the local zone (trailing zeros of the fraction dropped) */
export function rfc3339NanoLocal(ms: number): string {
  const d = new Date(Math.floor(ms));
  const micros = Math.floor(ms * 1000) % 1_000_000;
  let frac = micros ? '.' + String(micros).padStart(6, '0').replace(/0+$/, '') : '';
  const off = -d.getTimezoneOffset();
  const zone = off === 0 ? 'Z' : `${off > 0 ? '+' : '-'}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
  if (frac === '.') frac = '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}${frac}${zone}`;
}

function quotedList(list: string[]): string {
  return list.map(goQuote).join(',');
}

/** the one-line text form of an event (kube-apiserver's --audit-log-format=legacy) */
export function legacyLine(ev: AuditEvent, receivedAtMs: number): string {
  let user = '<none>';
  let groups = '<none>';
  if (ev.user.username) {
    user = ev.user.username;
    if (ev.user.groups?.length) groups = quotedList(ev.user.groups);
  }
  let as = '<self>';
  let asgroups = '<lookup>';
  if (ev.impersonatedUser) {
    as = ev.impersonatedUser.username;
    if (ev.impersonatedUser.groups) asgroups = quotedList(ev.impersonatedUser.groups);
  }
  const namespace = ev.objectRef?.namespace || '<none>';
  const response = ev.responseStatus ? String(ev.responseStatus.code) : '<deferred>';
  const ip = ev.sourceIPs?.[0] ?? '<unknown>';
  return (
    `${rfc3339NanoLocal(receivedAtMs)} AUDIT: id=${goQuote(ev.auditID)} stage=${goQuote(ev.stage)} ip=${goQuote(ip)} method=${goQuote(ev.verb)} ` +
    `user=${goQuote(user)} groups=${goQuote(groups)} as=${goQuote(as)} asgroups=${goQuote(asgroups)} user-agent=${goQuote(ev.userAgent ?? '')} ` +
    `namespace=${goQuote(namespace)} uri=${goQuote(ev.requestURI)} response="${response}"\n`
  );
}

// ---- the rotating file ----

const MEGABYTE = 1024 * 1024;
const DEFAULT_MAX_SIZE_MB = 100;

/** `2006-01-02T15-04-05.000` in UTC, lumberjack's backup time stamp */
function backupStamp(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}-${pad(d.getUTCMinutes())}-${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}

function parseBackupStamp(s: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/.exec(s);
  if (!m) return undefined;
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, +m[7]!);
}

/** a log file that rotates itself as lumberjack does (writes are synchronous) */
export class RotatingFile {
  private fd = -1;
  private size = 0;
  private readonly maxBytes: number;
  private readonly dir: string;
  private readonly prefix: string;
  private readonly ext: string;

  constructor(
    readonly path: string,
    private readonly o: { maxSize: number; maxBackups: number; maxAge: number; compress: boolean },
  ) {
    this.maxBytes = (o.maxSize > 0 ? o.maxSize : DEFAULT_MAX_SIZE_MB) * MEGABYTE;
    this.dir = dirname(path);
    this.ext = extname(path);
    this.prefix = basename(path).slice(0, basename(path).length - this.ext.length) + '-';
    // as kube-apiserver: the directory and the file exist (and are writable) before it serves
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    this.open();
  }

  private open(): void {
    this.fd = openSync(this.path, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
  }

  write(data: string | Buffer): void {
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    if (buf.length > this.maxBytes) throw new Error(`write length ${buf.length} exceeds maximum file size ${this.maxBytes}`);
    if (this.size + buf.length > this.maxBytes) this.rotate();
    let off = 0;
    while (off < buf.length) off += writeSync(this.fd, buf, off);
    this.size += buf.length;
  }

  private rotate(): void {
    closeSync(this.fd);
    const backup = join(this.dir, `${this.prefix}${backupStamp(Date.now())}${this.ext}`);
    renameSync(this.path, backup);
    this.open();
    this.mill();
  }

  /** remove backups beyond the count and age limits; compress the others when asked */
  private mill(): void {
    const backups: { name: string; t: number; gz: boolean }[] = [];
    for (const name of readdirSync(this.dir)) {
      if (!name.startsWith(this.prefix)) continue;
      let rest = name.slice(this.prefix.length);
      const gz = rest.endsWith(this.ext + '.gz');
      if (gz) rest = rest.slice(0, -(this.ext.length + 3));
      else if (rest.endsWith(this.ext)) rest = rest.slice(0, rest.length - this.ext.length);
      else continue;
      const t = parseBackupStamp(rest);
      if (t !== undefined) backups.push({ name, t, gz });
    }
    backups.sort((a, b) => b.t - a.t);
    let keep = backups;
    const remove: typeof backups = [];
    if (this.o.maxBackups > 0) {
      const seen = new Set<number>();
      keep = [];
      for (const b of backups) {
        // a backup and its compressed form count once
        if (!seen.has(b.t) && seen.size >= this.o.maxBackups) remove.push(b);
        else {
          seen.add(b.t);
          keep.push(b);
        }
      }
    }
    if (this.o.maxAge > 0) {
      const cutoff = Date.now() - this.o.maxAge * 24 * 3600_000;
      const young: typeof backups = [];
      for (const b of keep) (b.t < cutoff ? remove : young).push(b);
      keep = young;
    }
    for (const b of remove) {
      try {
        unlinkSync(join(this.dir, b.name));
      } catch {
        /* already gone */
      }
    }
    if (this.o.compress) {
      for (const b of keep) {
        if (b.gz) continue;
        const src = join(this.dir, b.name);
        try {
          const mode = statSync(src).mode & 0o777;
          writeFileSync(src + '.gz', gzipSync(readFileSync(src)), { mode });
          unlinkSync(src);
        } catch {
          /* left uncompressed */
        }
      }
    }
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}

// ---- the backend ----

export interface AuditSink {
  /** record an event (false when it could not be written) */
  process(ev: AuditEvent, receivedAtMs: number): boolean;
  shutdown(): void;
}

/** where the lines go */
interface LineWriter {
  write(data: string): void;
  close(): void;
}

function stdoutWriter(): LineWriter {
  return { write: (d) => void process.stdout.write(d), close: () => {} };
}

export class LogBackend implements AuditSink {
  private readonly out: LineWriter;
  private queue: string[] = [];
  private scheduled = false;
  private tokens: number;
  private lastRefill = Date.now();

  constructor(
    private readonly o: AuditLogOptions,
    private readonly onError: (err: unknown, msg: string) => void,
  ) {
    this.out = o.path === '-' ? stdoutWriter() : new RotatingFile(o.path, o);
    this.tokens = o.batch.throttleBurst;
  }

  private line(ev: AuditEvent, receivedAtMs: number): string | undefined {
    if (this.o.format === 'legacy') return legacyLine(ev, receivedAtMs);
    let line = stringifyJSON(ev) + '\n';
    if (this.o.truncate.enabled && line.length > this.o.truncate.maxEventSize) {
      // first the request and response objects go, then the event itself
      const cut: AuditEvent = { ...ev, requestObject: undefined, responseObject: undefined, annotations: { ...(ev.annotations ?? {}), 'audit.k8s.io/truncated': 'true' } };
      line = stringifyJSON(cut) + '\n';
      if (line.length > this.o.truncate.maxEventSize) {
        this.onError(new Error(`event is too large even after truncating (${line.length} bytes)`), 'Error in audit plugin \'truncate\' affecting 1 audit events');
        return undefined;
      }
    }
    return line;
  }

  process(ev: AuditEvent, receivedAtMs: number): boolean {
    const line = this.line(ev, receivedAtMs);
    if (line === undefined) return false;
    if (this.o.mode !== 'batch') {
      try {
        this.out.write(line);
        return true;
      } catch (e) {
        this.onError(e, "Error in audit plugin 'log' affecting 1 audit events");
        // blocking: the request goes on; blocking-strict: the caller refuses it
        return this.o.mode === 'blocking';
      }
    }
    if (this.queue.length >= this.o.batch.bufferSize) {
      this.onError(new Error('audit buffer queue blocked'), "Error in audit plugin 'buffered' affecting 1 audit events");
      return true;
    }
    this.queue.push(line);
    this.schedule();
    return true;
  }

  private schedule(delayMs?: number): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const wait = delayMs ?? (this.queue.length >= this.o.batch.maxBatchSize ? 0 : this.o.batch.maxBatchWaitMs);
    const run = () => {
      this.scheduled = false;
      const throttled = this.flush(false);
      if (this.queue.length) this.schedule(throttled ? Math.ceil(1000 / this.o.batch.throttleQPS) : undefined);
    };
    if (wait > 0) setTimeout(run, wait).unref();
    else setImmediate(run);
  }

  /** write queued batches (all of them when stopping; otherwise as the throttle allows); true when throttled */
  private flush(all: boolean): boolean {
    while (this.queue.length) {
      if (!all && this.o.batch.throttleEnable) {
        const now = Date.now();
        this.tokens = Math.min(this.o.batch.throttleBurst, this.tokens + ((now - this.lastRefill) / 1000) * this.o.batch.throttleQPS);
        this.lastRefill = now;
        if (this.tokens < 1) return true;
        this.tokens -= 1;
      }
      const batch = this.queue.splice(0, this.o.batch.maxBatchSize);
      try {
        this.out.write(batch.join(''));
      } catch (e) {
        this.onError(e, `Error in audit plugin 'log' affecting ${batch.length} audit events`);
      }
    }
    return false;
  }

  shutdown(): void {
    this.flush(true);
    this.out.close();
  }
}
