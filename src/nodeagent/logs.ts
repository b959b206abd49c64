// Reading a container's log file as the kubelet reads it for /containerLogs (kuberuntime's
// logs.ReadLogs): the CRI format the runtime writes, one record per line,
//   2016-10-06T00:17:09.669794202Z stdout P first part of a long line
//   2016-10-06T00:17:09.669794203Z stdout F and its end
// (P: a partial record, continued by the next; F: the record that ends the line), or Docker's
// JSON lines ({"log":"...\n","stream":"stdout","time":"..."}), the format told by the first line.
//
// The options are PodLogOptions', with the kubelet's meaning of each:
//   - tailLines counts records (file lines) from the end; a partial record counts as one;
//   - sinceSeconds / sinceTime: records older than the later of the two are skipped;
//   - timestamps: each output line starts with its first record's time, RFC3339 with nine digits
//     of fraction in the record's own offset (`2024-01-02T03:04:05.000000000Z`); the records that
//     continue a line carry none;
//   - limitBytes: the output stops after that many bytes, mid-line if need be;
//   - stream (Stdout, Stderr, All): records of the other stream are left out;
//   - follow: at the end of the file, wait for more (a change of the file, or a second) while the
//     container runs, asking `isRunning` before each wait; once it does not run, what the file
//     has is read and the reading ends. When the file at `path` is replaced (the kubelet rotates
//     0.log to 0.log.<time> and the runtime reopens 0.log), the rest of the old file is read and
//     the new one followed.
// An incomplete last line (no newline yet) is written when not following, and waited for when
// following. Lines that do not parse are skipped. The output is written to a Node writable (or
// anything with its write/'drain'/'close'), respecting its backpressure; the reading stops when
// the writable closes or the signal aborts.
import { open, realpath, stat, type FileHandle } from 'node:fs/promises';
import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from '../client/log.js';

/** the PodLogOptions the kubelet reads a log with */
export interface LogOptions {
  follow?: boolean;
  /** records from the end (undefined: all) */
  tailLines?: number;
  limitBytes?: number;
  sinceSeconds?: number;
  /** RFC 3339 */
  sinceTime?: string;
  timestamps?: boolean;
  /** PodLogOptions.stream: Stdout, Stderr or All (undefined: All) */
  stream?: string;
}

export interface ReadLogsOptions extends LogOptions {
  /** while following: whether the container still runs (the reading ends once it does not) */
  isRunning?: () => boolean | Promise<boolean>;
  /** ends the reading (the client went away) */
  signal?: AbortSignal;
  /** the longest wait for a change of the file while following (the kubelet's 1 s) */
  pollIntervalMs?: number;
  /** "now" for sinceSeconds, in ms (tests) */
  now?: number;
  log?: Logger;
}

/** what readLogs writes to: a Node writable, or an HTTP response */
export interface LogSink {
  write(chunk: Buffer): boolean;
  once(event: 'drain' | 'close' | 'error', listener: (...args: any[]) => void): unknown;
  removeListener(event: 'drain' | 'close' | 'error', listener: (...args: any[]) => void): unknown;
  readonly destroyed?: boolean;
  readonly writableEnded?: boolean;
}

// ---- time ----

/** a record's time: whole seconds since the epoch, nanoseconds, and how it is printed */
export interface LogTime {
  sec: number;
  nsec: number;
  /** RFC3339Nano with nine fraction digits, in the record's own offset */
  text: string;
}

const TIME_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** Go's time.Parse with RFC3339Nano's lenient layout (any number of fraction digits, or none); undefined when it does not parse */
export function parseLogTime(s: string): LogTime | undefined {
  const m = TIME_RE.exec(s);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, se, frac = '', zone] = m;
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const min = Number(mi);
  const secs = Number(se);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(Number(y), month) || hour > 23 || min > 59 || secs > 59) return undefined;
  let offset = 0;
  let printedZone = 'Z';
  if (zone !== 'Z') {
    const oh = Number(zone!.slice(1, 3));
    const om = Number(zone!.slice(4, 6));
    if (oh > 23 || om > 59) return undefined;
    offset = (zone![0] === '-' ? -1 : 1) * (oh * 3600 + om * 60);
    // (Go prints a zero offset as Z)
    if (offset !== 0) printedZone = zone!;
  }
  const sec = Date.UTC(Number(y), month - 1, day, hour, min, secs) / 1000 - offset;
  const nsec = Number(frac.padEnd(9, '0'));
  return { sec, nsec, text: `${y}-${mo}-${d}T${h}:${mi}:${se}.${frac.padEnd(9, '0')}${printedZone}` };
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function before(a: { sec: number; nsec: number }, b: { sec: number; nsec: number }): boolean {
  return a.sec < b.sec || (a.sec === b.sec && a.nsec < b.nsec);
}

/** the earliest time a record may have to be written (NewLogOptions: the later of sinceSeconds and sinceTime), or undefined */
export function sinceOf(o: Pick<LogOptions, 'sinceSeconds' | 'sinceTime'>, nowMs: number): { sec: number; nsec: number } | undefined {
  let since: { sec: number; nsec: number } | undefined;
  if (o.sinceSeconds !== undefined) {
    const t = nowMs - o.sinceSeconds * 1000;
    since = { sec: Math.floor(t / 1000), nsec: (((t % 1000) + 1000) % 1000) * 1e6 };
  }
  if (o.sinceTime !== undefined) {
    const t = parseLogTime(o.sinceTime);
    if (t && (!since || before(since, t))) since = { sec: t.sec, nsec: t.nsec };
  }
  return since;
}

// ---- records ----

export interface LogRecord {
  time: LogTime;
  stream: 'stdout' | 'stderr';
  /** the content; a partial record's has no newline, a full record's ends with one (unless the file does not) */
  content: Buffer;
}

const SPACE = 0x20;
const NL = 0x0a;

/** one line of the CRI format (parseCRILog); a string says why it does not parse */
export function parseCRILine(line: Buffer): LogRecord | string {
  let i = line.indexOf(SPACE);
  if (i < 0) return 'timestamp is not found';
  const time = parseLogTime(line.toString('latin1', 0, i));
  if (!time) return `unexpected timestamp format "2006-01-02T15:04:05.999999999Z07:00": ${JSON.stringify(line.toString('utf8', 0, i))}`;
  let rest = line.subarray(i + 1);
  i = rest.indexOf(SPACE);
  if (i < 0) return 'stream type is not found';
  const stream = rest.toString('latin1', 0, i);
  if (stream !== 'stdout' && stream !== 'stderr') return `unexpected stream type "${stream}"`;
  rest = rest.subarray(i + 1);
  i = rest.indexOf(SPACE);
  if (i < 0) return 'log tag is not found';
  // tags are `:`-separated, the first P (partial) or F (full); a partial record's newline is not content
  const tags = rest.toString('latin1', 0, i).split(':');
  if (tags[0] === 'P' && rest.length > 0 && rest[rest.length - 1] === NL) rest = rest.subarray(0, rest.length - 1);
  return { time, stream, content: rest.subarray(i + 1) };
}

/** one line of Docker's JSON format (parseDockerJSONLog) */
export function parseDockerJSONLine(line: Buffer): LogRecord | string {
  let v: any;
  try {
    v = JSON.parse(line.toString('utf8'));
  } catch (e) {
    return `failed to unmarshal log: ${(e as Error).message}`;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return 'failed to unmarshal log: not an object';
  const time = typeof v.time === 'string' ? parseLogTime(v.time) : undefined;
  if (!time) return 'failed to unmarshal log: bad time';
  const stream = v.stream;
  if (stream !== 'stdout' && stream !== 'stderr') return `unexpected stream type "${String(stream ?? '')}"`;
  return { time, stream, content: Buffer.from(typeof v.log === 'string' ? v.log : '', 'utf8') };
}

type Parser = (line: Buffer) => LogRecord | string;

/** the parser that reads the first line (getParseFunc) */
function parserFor(line: Buffer): Parser | undefined {
  for (const p of [parseCRILine, parseDockerJSONLine]) if (typeof p(line) !== 'string') return p;
  return undefined;
}

// ---- tail ----

const BLOCK = 64 * 1024;

/**
 * Where the last `n` lines start (tail.FindTailLineStartIndex): the offset after the (n+1)th newline
 * from the end, or 0; an incomplete last line is not counted. n < 0: the beginning.
 */
export async function tailStart(f: FileHandle, size: number, n: number): Promise<number> {
  if (n < 0) return 0;
  let count = 0;
  let right = size;
  const buf = Buffer.allocUnsafe(BLOCK);
  while (right > 0) {
    const left = Math.max(0, right - BLOCK);
    const len = right - left;
    const { bytesRead } = await f.read(buf, 0, len, left);
    for (let i = bytesRead - 1; i >= 0; i--) {
      if (buf[i] !== NL) continue;
      count++;
      if (count > n) return left + i + 1;
    }
    right = left;
  }
  return 0;
}

// ---- reading ----

class Stop extends Error {}

/** an error of the reading, in the kubelet's words (its /containerLogs answers 400 with it) */
export class LogReadError extends Error {
  override name = 'LogReadError';
}

function goPathError(op: string, path: string, e: unknown): string {
  const code = (e as NodeJS.ErrnoException)?.code;
  const why = code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : code === 'ENOTDIR' ? 'not a directory' : (e as Error)?.message ?? String(e);
  return `${op} ${path}: ${why}`;
}

/**
 * Reads the log at `path` to `out` with the kubelet's options (see the head of this file).
 * Resolves when the reading is done (the end of the file, the limit, the container stopped, the
 * client gone); rejects with a LogReadError when the file cannot be read.
 */
export async function readLogs(path: string, out: LogSink, o: ReadLogsOptions = {}): Promise<void> {
  // (symlinks resolved first, as the kubelet does for its file watch)
  // A rotation renames the file before the runtime reopens it: a file missing is looked for again
  // for up to half a second before it is an error (the kubelet itself answers at once with it).
  let resolved: string;
  for (let attempt = 0; ; attempt++) {
    try {
      resolved = await realpath(path);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' && attempt < 10) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      throw new LogReadError(`failed to try resolving symlinks in path ${JSON.stringify(path)}: ${goPathError('lstat', path, e)}`);
    }
  }
  let f: FileHandle;
  try {
    f = await open(resolved, 'r');
  } catch (e) {
    throw new LogReadError(`failed to open log file ${JSON.stringify(resolved)}: ${goPathError('open', resolved, e)}`);
  }
  const r = new Reader(resolved, f, out, o);
  try {
    await r.run();
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
  } finally {
    r.dispose();
    await r.file.close().catch(() => {});
  }
}

class Reader {
  file: FileHandle;
  private pos = 0;
  private pending: Buffer = Buffer.alloc(0);
  private parse?: Parser;
  private remain: number;
  private readonly since?: { sec: number; nsec: number };
  private readonly limited: boolean;
  private limitedNum: number;
  private newLine = true;
  private readonly wanted?: 'stdout' | 'stderr';
  private readonly buf = Buffer.allocUnsafe(BLOCK);
  private watcher?: FSWatcher;
  private wake?: () => void;
  private closed = false;
  private readonly onClose = () => {
    this.closed = true;
    this.wake?.();
  };

  constructor(
    private readonly path: string,
    f: FileHandle,
    private readonly out: LogSink,
    private readonly o: ReadLogsOptions,
  ) {
    this.file = f;
    this.remain = o.limitBytes !== undefined && o.limitBytes >= 0 ? o.limitBytes : Infinity;
    this.since = sinceOf(o, o.now ?? Date.now());
    this.limited = o.tailLines !== undefined && o.tailLines >= 0 && !o.follow;
    this.limitedNum = o.tailLines ?? -1;
    this.wanted = o.stream === 'Stdout' ? 'stdout' : o.stream === 'Stderr' ? 'stderr' : undefined;
    out.once('close', this.onClose);
    out.once('error', this.onClose);
    o.signal?.addEventListener('abort', this.onClose, { once: true });
  }

  dispose(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.out.removeListener('close', this.onClose);
    this.out.removeListener('error', this.onClose);
    this.o.signal?.removeEventListener('abort', this.onClose);
  }

  private gone(): boolean {
    return this.closed || this.o.signal?.aborted === true || this.out.destroyed === true || this.out.writableEnded === true;
  }

  async run(): Promise<void> {
    const size = (await this.file.stat()).size;
    this.pos = await tailStart(this.file, size, this.o.tailLines ?? -1);
    let found = true;
    let watching = false;
    for (;;) {
      if (this.gone()) return;
      if (this.limited && this.limitedNum <= 0) return;
      const line = await this.nextLine();
      if (line) {
        await this.handle(line);
        continue;
      }
      // the end of the file: what is pending is an incomplete line (or nothing)
      if (!this.o.follow) {
        if (this.pending.length) {
          const last = this.pending;
          this.pending = Buffer.alloc(0);
          await this.handle(last);
        }
        return;
      }
      if (!found) return;
      if (!watching) {
        // (the watch is armed, then the file read again: a write in between has no event)
        this.startWatch();
        watching = true;
        continue;
      }
      const w = await this.waitLogs();
      found = w.found;
      if (w.recreated) await this.reopen();
    }
  }

  /** the next whole line (with its newline) from the file, or undefined at its end */
  private async nextLine(): Promise<Buffer | undefined> {
    for (;;) {
      const nl = this.pending.indexOf(NL);
      if (nl >= 0) {
        const line = this.pending.subarray(0, nl + 1);
        this.pending = this.pending.subarray(nl + 1);
        return line;
      }
      const { bytesRead } = await this.file.read(this.buf, 0, BLOCK, this.pos);
      if (bytesRead === 0) return undefined;
      this.pos += bytesRead;
      this.pending = this.pending.length ? Buffer.concat([this.pending, this.buf.subarray(0, bytesRead)]) : Buffer.from(this.buf.subarray(0, bytesRead));
    }
  }

  private async handle(line: Buffer): Promise<void> {
    if (!this.parse) {
      this.parse = parserFor(line);
      if (!this.parse) throw new LogReadError(`failed to get parse function: unsupported log format: ${JSON.stringify(line.toString('utf8'))}`);
    }
    const rec = this.parse(line);
    if (typeof rec === 'string') {
      this.o.log?.v(4).info('Failed when parsing line in log file', { path: this.path, err: rec });
      return;
    }
    await this.write(rec);
    if (this.limited) this.limitedNum--;
    this.newLine = rec.content.length === 0 || rec.content[rec.content.length - 1] === NL;
  }

  /** logWriter.write */
  private async write(rec: LogRecord): Promise<void> {
    if (this.since && before(rec.time, this.since)) return;
    if (this.wanted && rec.stream !== this.wanted) return;
    let chunk = rec.content;
    if (this.o.timestamps && this.newLine) chunk = Buffer.concat([Buffer.from(rec.time.text + ' ', 'latin1'), chunk]);
    if (chunk.length > this.remain) chunk = chunk.subarray(0, this.remain);
    if (chunk.length) {
      this.remain -= chunk.length;
      await this.emit(chunk);
    }
    if (this.remain <= 0) throw new Stop();
  }

  private emit(chunk: Buffer): Promise<void> {
    if (this.gone()) throw new Stop();
    if (this.out.write(chunk)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        this.out.removeListener('drain', done);
        this.out.removeListener('close', done);
        resolve();
      };
      this.out.once('drain', done);
      this.out.once('close', done);
    });
  }

  private startWatch(): void {
    try {
      this.watcher = watch(this.path, { persistent: false }, (event) => {
        if (event === 'rename') this.renamed = true;
        this.wake?.();
      });
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch {
      // (no watch to be had, e.g. inotify's limits: the periodic check alone)
      this.watcher = undefined;
    }
  }

  private renamed = false;

  /** waitLogs: whether the container may still write, and whether the file was replaced */
  private async waitLogs(): Promise<{ found: boolean; recreated: boolean }> {
    if (!(await this.running())) return { found: false, recreated: false };
    if (this.gone()) throw new Stop();
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, this.o.pollIntervalMs ?? 1000);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.wake = done;
    });
    this.wake = undefined;
    if (this.gone()) throw new Stop();
    // replaced: a rename seen, or the path now names another file (an event may be missed)
    const recreated = this.renamed || (await this.replaced());
    this.renamed = false;
    return { found: true, recreated };
  }

  private async running(): Promise<boolean> {
    if (!this.o.isRunning) return true;
    try {
      return await this.o.isRunning();
    } catch {
      return false;
    }
  }

  private async replaced(): Promise<boolean> {
    try {
      const [a, b] = await Promise.all([this.file.stat(), stat(this.path)]);
      return a.ino !== b.ino || a.dev !== b.dev;
    } catch {
      // (the path is gone: rotated, and the new file not there yet)
      return true;
    }
  }

  /** the file at the path was replaced: the rest of the old one is read, then the new one followed */
  private async reopen(): Promise<void> {
    let next: FileHandle;
    try {
      next = await open(this.path, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new LogReadError(`failed to open log file ${JSON.stringify(this.path)}: ${goPathError('open', this.path, e)}`);
    }
    const [a, b] = await Promise.all([this.file.stat(), next.stat()]);
    if (a.ino === b.ino && a.dev === b.dev) {
      await next.close();
      return;
    }
    for (;;) {
      const line = await this.nextLine();
      if (!line) break;
      await this.handle(line);
    }
    // (an incomplete last line of the old file is dropped, as the kubelet's new reader drops it)
    this.pending = Buffer.alloc(0);
    await this.file.close().catch(() => {});
    this.file = next;
    this.pos = 0;
    this.watcher?.close();
    this.watcher = undefined;
    this.startWatch();
  }
}
