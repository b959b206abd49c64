// klog-style logging for every Keelson daemon.
//
// A line looks like Kubernetes' text format:
//
//   I1122 03:02:01.123456   12345 controller.ts:123] "Starting controller" name="endpoints" workers=5
//
// severity letter (I, W, E, F), MMDD, local time with microseconds, the process id right-aligned
// in 7 columns, the caller's source file and line (TypeScript positions, through the compiled
// code's source maps), `]`, then the message. Structured calls (info, warn, error) quote the
// message and append key/value pairs with klog's quoting rules; printf-style calls (infof, ...)
// print the text as is, as klog.Infof does.
//
// Verbosity: `log.v(4).info(...)` writes only when -v is 4 or more, or when a --vmodule pattern
// matching the calling file allows it. The disabled path is one comparison and allocates
// nothing; the caller's file is looked up only when a line is written, or when --vmodule is in
// use and the logger was not created with forModule().

import { readFileSync, existsSync, writeSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlagSet, parseGoUint, DurationValue, holder, QuantityValue, BoolValue, StringValue, type Value, type FeatureGate, type FeatureSpec } from './flags.js';
import { goQuote } from '../machinery/gostrings.js';

// ── configuration ──────────────────────────────────────────────────────────

export interface VModuleItem {
  /** A file name without extension, or a glob (`*`, `?`, `[...]`) matched against it. */
  filePattern: string;
  verbosity: number;
}

export interface LogSink {
  write(s: string): unknown;
}

/** How long a line waits for a full pipe to drain before it is dropped (the reader may be stopped for good). */
const STALLED_OUTPUT_MS = 5_000;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * A sink writing synchronously to a file descriptor (2 = stderr), so nothing is lost on exit.
 * Node.js makes a pipe or socket on 0-2 non-blocking as soon as anything touches process.stdout or
 * process.stderr, so a write may be partial or fail with EAGAIN while the reader is behind: the rest
 * is written once the pipe drains (as Go's klog blocks on a full pipe), waiting at most
 * STALLED_OUTPUT_MS without progress.
 */
export function fdSink(fd: number): LogSink {
  return {
    write(s: string) {
      const b = Buffer.from(s);
      let off = 0;
      let stalledSince = 0;
      while (off < b.length) {
        try {
          const n = writeSync(fd, b, off, b.length - off);
          off += n;
          if (n > 0) stalledSince = 0;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') return; // a closed or broken stderr must not crash the daemon
          const now = Date.now();
          if (!stalledSince) stalledSince = now;
          else if (now - stalledSince > STALLED_OUTPUT_MS) return;
          Atomics.wait(pause, 0, 0, 1);
        }
      }
    },
  };
}

export interface KlogOptions {
  /** -v */
  verbosity: number;
  /** --vmodule */
  vmodule: VModuleItem[];
  /** --log-flush-frequency, in milliseconds. Lines are written synchronously; kept for compatibility. */
  flushFrequency: number;
  /** --logging-format; only "text" exists. */
  format: string;
  /** --log-text-split-stream: errors to `errorOutput`, the rest to `infoOutput`. */
  splitStream: boolean;
  /** --log-text-info-buffer-size (accepted; lines are not buffered). */
  infoBufferSize: string;
  /** Where lines go (stderr by default). */
  output: LogSink;
  /** With splitStream: info and warning lines. */
  infoOutput: LogSink;
  /** With splitStream: error and fatal lines. */
  errorOutput: LogSink;
  /** Source file and line of the caller in each header; false prints `???:1`, and costs nothing. */
  callerLookup: boolean;
  /** Header times in UTC instead of local time. */
  utc: boolean;
  /** Clock (tests). Returns milliseconds since the epoch, possibly fractional. */
  now: () => number;
  pid: number;
  /** Called by fatal() after writing (tests replace it). */
  exit: (code: number) => never;
}

let clockOffset = Date.now() - performance.now();

function defaultNow(): number {
  // Date.now() has millisecond resolution; the monotonic clock supplies the microseconds klog
  // prints. The two are re-aligned whenever the wall clock moves away (NTP steps, suspend).
  const t = clockOffset + performance.now();
  const wall = Date.now();
  if (t < wall - 1 || t > wall + 2) {
    clockOffset = wall - performance.now();
    return wall;
  }
  return t;
}

const stderrSink = fdSink(2);

const state: KlogOptions & { vmoduleMax: number } = {
  verbosity: 0,
  vmodule: [],
  flushFrequency: 5000,
  format: 'text',
  splitStream: false,
  infoBufferSize: '0',
  output: stderrSink,
  infoOutput: fdSink(1),
  errorOutput: stderrSink,
  callerLookup: true,
  utc: false,
  now: defaultNow,
  pid: process.pid,
  exit: (code: number) => process.exit(code),
  vmoduleMax: -1,
};

/** Changes logging settings (what the flags do); returns the settings in effect. */
export function configure(opts: Partial<KlogOptions>): Readonly<KlogOptions> {
  Object.assign(state, opts);
  if (opts.vmodule) {
    state.vmoduleMax = opts.vmodule.length ? Math.max(...opts.vmodule.map((m) => m.verbosity)) : -1;
    compiledVmodule = opts.vmodule.map((m) => ({ ...m, re: globToRegExp(m.filePattern) }));
    vmoduleCache.clear();
  }
  return state;
}

/** The settings in effect. */
export function settings(): Readonly<KlogOptions> {
  return state;
}

/** Lines are written synchronously, so there is nothing to flush; kept for klog.Flush callers. */
export function flush(): void {}

// ── vmodule ────────────────────────────────────────────────────────────────

function globToRegExp(pattern: string): RegExp | null {
  if (!/[*?[\\]/.test(pattern)) return null; // literal
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '\\' && i + 1 < pattern.length) re += '\\' + pattern[++i];
    else if (c === '[') {
      const j = pattern.indexOf(']', i + 1);
      if (j < 0) return /$^/; // Go's filepath.Match reports ErrBadPattern: never matches
      let cls = pattern.slice(i + 1, j);
      if (cls.startsWith('^')) cls = '^' + cls.slice(1).replace(/\\/g, '\\\\');
      else cls = cls.replace(/\\/g, '\\\\');
      re += '[' + cls + ']';
      i = j;
    } else re += c.replace(/[.+^${}()|\]]/g, '\\$&');
  }
  return new RegExp(re + '$');
}

let compiledVmodule: (VModuleItem & { re: RegExp | null })[] = [];
const vmoduleCache = new Map<string, number>();

/** The vmodule level for a file name (basename without extension); -1 if no pattern matches. */
function vmoduleLevel(file: string): number {
  let v = vmoduleCache.get(file);
  if (v !== undefined) return v;
  v = -1;
  for (const m of compiledVmodule) {
    if (m.re ? m.re.test(file) : m.filePattern === file) { v = m.verbosity; break; }
  }
  vmoduleCache.set(file, v);
  return v;
}

function moduleName(file: string): string {
  return basename(file).replace(/\.(?:[cm]?[jt]s)$/, '');
}

/** Parses a --vmodule value (`pattern=N,...`) with component-base's messages. */
export function parseVModule(value: string): VModuleItem[] {
  const out: VModuleItem[] = [];
  for (const pat of value.split(',')) {
    if (pat.length === 0) continue;
    const parts = pat.split('=');
    if (parts.length !== 2 || parts[0]!.length === 0 || parts[1]!.length === 0) throw new Error(`${goQuote(pat)} does not have the pattern=N format`);
    let v: bigint;
    try {
      v = parseGoUint(parts[1]!, 10, 31);
    } catch (e) {
      throw new Error(`parsing verbosity in ${goQuote(pat)}: ${(e as Error).message}`);
    }
    out.push({ filePattern: parts[0]!, verbosity: Number(v) });
  }
  return out;
}

// ── caller lookup ──────────────────────────────────────────────────────────

interface Site {
  file: string;
  line: number;
  col: number;
}

function rawCaller(skip: number): Site | undefined {
  const origPrepare = Error.prepareStackTrace;
  const origLimit = Error.stackTraceLimit;
  let sites: NodeJS.CallSite[] | undefined;
  try {
    // a few frames more: a logger handed to an emitter as a listener is called from Node's own
    // code (node:events), which klog's file:line should pass over for the caller's
    Error.stackTraceLimit = skip + 6;
    Error.prepareStackTrace = (_e, cs) => cs;
    const holderObj: { stack?: NodeJS.CallSite[] } = {};
    Error.captureStackTrace(holderObj, rawCaller);
    sites = holderObj.stack;
  } finally {
    Error.prepareStackTrace = origPrepare;
    Error.stackTraceLimit = origLimit;
  }
  let i = skip;
  while (sites && i < sites.length - 1 && (sites[i]!.getFileName() ?? '').startsWith('node:')) i++;
  const s = sites?.[i];
  if (!s) return undefined;
  let file = s.getFileName() ?? '';
  if (file.startsWith('file://')) file = fileURLToPath(file);
  return { file, line: s.getLineNumber() ?? 0, col: s.getColumnNumber() ?? 0 };
}

/**
 * A compiled file's source map, decoded only as far as the lines asked for. Node's SourceMap
 * decodes every mapping of the file up front, which cost about 100 ms of start-up for the first
 * log lines of the big modules; a log line needs one position, so this reads the VLQ mappings
 * (source map v3) lazily, line by line. The mappings' fields are relative to the segment before,
 * across lines, so reaching line N means decoding every line before it: for the bundle's big
 * chunks (a megabyte of mappings) that alone took about 100 ms. The build therefore writes, beside
 * each map, its index (`<file>.js.lines`, see index()): the mappings with the decoder's running
 * state at every CHECKPOINT_LINES-th line, so that a lookup decodes at most that many lines.
 */
export class LazyLineMap {
  private readonly mappings: string;
  private readonly sources: string[];
  /** per CHECKPOINT_LINES-th generated line: offset in `mappings`, source index, original line, original column */
  private checkpoints: number[] = [];
  /** offset in `mappings` where generated line `next` starts */
  private pos = 0;
  private next = 0;
  /** running values of the mappings' relative fields: source index, original line, original column */
  private src = 0;
  private oline = 0;
  private ocol = 0;
  /** decoded generated lines: their segments, flat, as generatedColumn, source, originalLine */
  private readonly lines = new Map<number, number[]>();

  constructor(map: { mappings?: unknown; sources?: unknown }) {
    this.mappings = typeof map.mappings === 'string' ? map.mappings : '';
    this.sources = Array.isArray(map.sources) ? map.sources.map(String) : [];
  }

  /** the whole map with its checkpoints, in the form fromIndex() reads (what the build writes as `<file>.js.lines`) */
  index(): { sources: string[]; mappings: string; every: number; checkpoints: number[] } {
    const cps: number[] = [];
    this.seek(0, 0, 0, 0, 0);
    while (this.pos <= this.mappings.length) {
      if (this.next % CHECKPOINT_LINES === 0) cps.push(this.pos, this.src, this.oline, this.ocol);
      this.decodeLine(false);
    }
    this.seek(0, 0, 0, 0, 0);
    return { sources: this.sources, mappings: this.mappings, every: CHECKPOINT_LINES, checkpoints: cps };
  }

  static fromIndex(t: { sources?: unknown; mappings?: unknown; every?: unknown; checkpoints?: unknown }): LazyLineMap {
    const m = new LazyLineMap(t);
    if (t.every === CHECKPOINT_LINES && Array.isArray(t.checkpoints)) m.checkpoints = t.checkpoints.map(Number);
    return m;
  }

  private seek(line: number, pos: number, src: number, oline: number, ocol: number): void {
    this.next = line;
    this.pos = pos;
    this.src = src;
    this.oline = oline;
    this.ocol = ocol;
  }

  /** the original file and 0-based line of a 0-based generated position */
  find(line: number, col: number): { source: string; line: number } | undefined {
    let segs = this.lines.get(line);
    if (!segs) {
      // from the nearest checkpoint at or before the line, unless decoding goes there anyway
      const k = Math.floor(line / CHECKPOINT_LINES);
      if ((line < this.next || k * CHECKPOINT_LINES > this.next) && this.checkpoints.length >= 4 * (k + 1)) {
        const c = this.checkpoints;
        this.seek(k * CHECKPOINT_LINES, c[4 * k]!, c[4 * k + 1]!, c[4 * k + 2]!, c[4 * k + 3]!);
      } else if (line < this.next) this.seek(0, 0, 0, 0, 0);
      while (this.next <= line && this.pos <= this.mappings.length) this.decodeLine(true);
      segs = this.lines.get(line);
    }
    if (!segs || segs.length < 3) return undefined;
    let best = 0;
    for (let i = 0; i < segs.length; i += 3) {
      if (segs[i]! > col) break;
      best = i;
    }
    const source = this.sources[segs[best + 1]!];
    return source === undefined ? undefined : { source, line: segs[best + 2]! };
  }

  private decodeLine(keep: boolean): void {
    const m = this.mappings;
    const segs: number[] = [];
    let gcol = 0;
    const fields: number[] = [];
    let value = 0;
    let shift = 0;
    const endSegment = () => {
      if (fields.length >= 4) {
        gcol += fields[0]!;
        this.src += fields[1]!;
        this.oline += fields[2]!;
        this.ocol += fields[3]!;
        segs.push(gcol, this.src, this.oline);
      } else if (fields.length >= 1) gcol += fields[0]!;
      fields.length = 0;
    };
    while (this.pos < m.length) {
      const ch = m.charCodeAt(this.pos++);
      if (ch === 59 /* ; */) break;
      if (ch === 44 /* , */) {
        endSegment();
        continue;
      }
      const digit = ch < 128 ? BASE64_DIGIT[ch]! : -1;
      if (digit < 0) continue;
      value += (digit & 31) << shift;
      if (digit & 32) {
        shift += 5;
        continue;
      }
      fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
    endSegment();
    if (this.pos >= m.length) this.pos = m.length + 1; // the last line is decoded
    if (keep) {
      if (this.lines.size > 4096) this.lines.clear();
      this.lines.set(this.next, segs);
    }
    this.next++;
  }
}

/** how many generated lines lie between two checkpoints of a map's index */
const CHECKPOINT_LINES = 256;

/** the value of each base64 character code, -1 for the others */
const BASE64_DIGIT = new Int8Array(128).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) BASE64_DIGIT[c.charCodeAt(0)] = i;

const sourceMaps = new Map<string, LazyLineMap | null>();

function sourceMapFor(file: string): LazyLineMap | null {
  let sm = sourceMaps.get(file);
  if (sm !== undefined) return sm;
  sm = null;
  try {
    const tablePath = file + '.lines';
    const mapPath = file + '.map';
    if (!file.endsWith('.js')) sm = null;
    else if (existsSync(tablePath)) sm = LazyLineMap.fromIndex(JSON.parse(readFileSync(tablePath, 'utf8')));
    else if (existsSync(mapPath)) sm = new LazyLineMap(JSON.parse(readFileSync(mapPath, 'utf8')));
  } catch {
    sm = null;
  }
  sourceMaps.set(file, sm);
  return sm;
}

const headerCache = new Map<string, string>();

/** `file.ts:123` for a call site, through the compiled file's source map when there is one. */
function siteLabel(site: Site): string {
  const key = `${site.file}:${site.line}:${site.col}`;
  let label = headerCache.get(key);
  if (label !== undefined) return label;
  label = `${basename(site.file)}:${site.line}`;
  const e = sourceMapFor(site.file)?.find(site.line - 1, site.col - 1);
  if (e) label = `${basename(e.source)}:${e.line + 1}`;
  if (headerCache.size > 10000) headerCache.clear();
  headerCache.set(key, label);
  return label;
}

// ── formatting ─────────────────────────────────────────────────────────────

const SEVERITY = ['I', 'W', 'E', 'F'] as const;
type Severity = 0 | 1 | 2 | 3;

function two(n: number): string {
  return n < 10 ? '0' + n : String(n);
}

/** The klog header: `I1122 03:02:01.123456   12345 file.ts:123] `. */
export function formatHeader(sev: Severity, fileLine: string, nowMs: number, pid: number, utc = false): string {
  const ms = Math.floor(nowMs);
  const d = new Date(ms);
  const micros = (ms % 1000) * 1000 + Math.floor((nowMs - ms) * 1000);
  const month = utc ? d.getUTCMonth() + 1 : d.getMonth() + 1;
  const day = utc ? d.getUTCDate() : d.getDate();
  const hh = utc ? d.getUTCHours() : d.getHours();
  const mm = utc ? d.getUTCMinutes() : d.getMinutes();
  const ss = utc ? d.getUTCSeconds() : d.getSeconds();
  return `${SEVERITY[sev]}${two(month)}${two(day)} ${two(hh)}:${two(mm)}:${two(ss)}.${String(micros).padStart(6, '0')} ${String(pid).padStart(7, ' ')} ${fileLine}] `;
}

const TEXT_WRITER = Symbol.for('keelson.klog.writeText');

interface TextWriter {
  [TEXT_WRITER](): string;
}

function isTextWriter(v: unknown): v is TextWriter {
  return typeof v === 'object' && v !== null && typeof (v as Record<symbol, unknown>)[TEXT_WRITER] === 'function';
}

/** klog.ObjectRef: logs as `"namespace/name"` (or `"name"`). */
export class ObjectRef implements TextWriter {
  constructor(readonly name: string, readonly namespace = '') {}
  toString(): string { return this.namespace ? `${this.namespace}/${this.name}` : this.name; }
  toJSON(): { name: string; namespace?: string } { return this.namespace ? { name: this.name, namespace: this.namespace } : { name: this.name }; }
  [TEXT_WRITER](): string { return '"' + this.toString() + '"'; }
}

/** klog.KObj: a reference to an object with metadata (or {name, namespace}). */
export function kobj(o: { metadata?: { name?: string; namespace?: string }; name?: string; namespace?: string } | null | undefined): ObjectRef {
  if (!o) return new ObjectRef('');
  const m = o.metadata ?? o;
  return new ObjectRef(m.name ?? '', m.namespace ?? '');
}

/** klog.KRef. */
export function kref(namespace: string, name: string): ObjectRef {
  return new ObjectRef(name, namespace);
}

/** klog's writeStringValue: `="quoted"`, or a `=<` block for multi-line text. */
function stringValue(v: string): string {
  const idx = v.indexOf('\n');
  if (idx < 0) return '=' + goQuote(v);
  let out = '=<\n';
  let data = v;
  let i = idx;
  while (i >= 0) {
    out += '\t' + data.slice(0, i + 1);
    data = data.slice(i + 1);
    i = data.indexOf('\n');
  }
  if (data.length === 0) out += ' >';
  else out += '\t' + data + '\n >';
  return out;
}

/** Go's json.Encoder output: HTML-escaped, U+2028/2029 escaped; errors become klog's internal-error text. */
function jsonValue(v: unknown): string {
  try {
    const s = JSON.stringify(v, (_k, x: unknown) => {
      if (typeof x === 'bigint') return x.toString();
      if (typeof x === 'number' && !Number.isFinite(x)) throw new Error(`json: unsupported value: ${Number.isNaN(x) ? 'NaN' : x > 0 ? '+Inf' : '-Inf'}`);
      if (x instanceof Map) return Object.fromEntries(x);
      if (x instanceof Set) return [...x];
      return x;
    });
    if (s === undefined) return 'null';
    return s.replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  } catch (e) {
    return `"<internal error: ${(e as Error).message}>"`;
  }
}

function hasCustomToString(v: object): boolean {
  const ts = (v as { toString?: unknown }).toString;
  return typeof ts === 'function' && ts !== Object.prototype.toString && ts !== Array.prototype.toString && !(v instanceof Map) && !(v instanceof Set);
}

/** One ` key=value` pair as klog's KVFormat writes it. */
export function formatKV(key: unknown, v: unknown): string {
  const k = ' ' + String(key);
  if (isTextWriter(v)) return k + '=' + v[TEXT_WRITER]();
  if (typeof v === 'string') return k + stringValue(v);
  if (v instanceof Error) return k + stringValue(v.message);
  if (v instanceof Date) return k + stringValue(Number.isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString());
  if (v instanceof Uint8Array) return k + '=' + goQuote(Buffer.from(v).toString('latin1')).replace(/[^\x00-\x7f]/g, (c) => '\\x' + c.charCodeAt(0).toString(16).padStart(2, '0'));
  if (typeof v === 'bigint') return k + '=' + v.toString();
  if (typeof v === 'function') return k + '="<func>"';
  if (typeof v === 'symbol') return k + stringValue(v.toString());
  if (typeof v === 'object' && v !== null && !Array.isArray(v) && hasCustomToString(v) && Object.getPrototypeOf(v) !== Object.prototype) {
    return k + stringValue(String(v));
  }
  return k + '=' + jsonValue(v === undefined ? null : v);
}

export type KeysAndValues = Record<string, unknown> | readonly unknown[];

function toPairs(kv: KeysAndValues | undefined, out: [string, unknown][]): void {
  if (!kv) return;
  if (Array.isArray(kv)) {
    for (let i = 0; i < kv.length; i += 2) out.push([String(kv[i]), i + 1 < kv.length ? kv[i + 1] : '(MISSING)']);
  } else {
    for (const [k, v] of Object.entries(kv)) out.push([k, v]);
  }
}

/** Serializes key/value lists as klog does, dropping earlier duplicates of a key. */
export function formatKVs(...lists: (KeysAndValues | undefined)[]): string {
  const pairs: [string, unknown][] = [];
  for (const l of lists) toPairs(l, pairs);
  const texts: { key: string; text: string }[] = [];
  for (const [k, v] of pairs) {
    const text = formatKV(k, v);
    const i = texts.findIndex((t) => t.key === k);
    if (i >= 0) {
      if (texts[i]!.text === text) continue;
      texts.splice(i, 1);
    }
    texts.push({ key: k, text });
  }
  return texts.map((t) => t.text).join('');
}

/** A small Go-printf for infof & co: %s %v %d %q %f %t %x %j %%, with %+v/%#v treated as %v. */
export function sprintf(format: string, ...args: unknown[]): string {
  let i = 0;
  const out = format.replace(/%([-+# 0]*)(\d+)?(?:\.(\d+))?([svdqftxXj%])/g, (_m, _fl: string, width: string | undefined, prec: string | undefined, verb: string) => {
    if (verb === '%') return '%';
    if (i >= args.length) return `%!${verb}(MISSING)`;
    const a = args[i++];
    let s: string;
    switch (verb) {
      case 'd': s = typeof a === 'number' ? String(Math.trunc(a)) : String(a); break;
      case 'f': s = typeof a === 'number' ? a.toFixed(prec !== undefined ? Number(prec) : 6) : String(a); break;
      case 'q': s = goQuote(a instanceof Error ? a.message : String(a)); break;
      case 'x': s = typeof a === 'number' ? a.toString(16) : Buffer.from(String(a)).toString('hex'); break;
      case 'X': s = typeof a === 'number' ? a.toString(16).toUpperCase() : Buffer.from(String(a)).toString('hex').toUpperCase(); break;
      case 'j': s = jsonValue(a); break;
      case 't': s = String(a); break;
      default:
        if (a instanceof Error) s = a.message;
        else if (typeof a === 'object' && a !== null && !hasCustomToString(a)) s = jsonValue(a);
        else s = String(a);
    }
    return width ? s.padStart(Number(width)) : s;
  });
  return i < args.length ? out + '%!(EXTRA ' + args.slice(i).map((a) => String(a)).join(', ') + ')' : out;
}

// ── the logger ─────────────────────────────────────────────────────────────

function emit(sev: Severity, body: string, skip: number): void {
  let fileLine = '???:1';
  if (state.callerLookup) {
    const site = rawCaller(skip + 1);
    if (site) fileLine = siteLabel(site);
  }
  let line = formatHeader(sev, fileLine, state.now(), state.pid, state.utc) + body;
  if (!line.endsWith('\n')) line += '\n';
  if (state.splitStream) (sev >= 2 ? state.errorOutput : state.infoOutput).write(line);
  else state.output.write(line);
}

/** The result of `log.v(n)`: writes only if that verbosity is enabled. */
export class Verbose {
  constructor(readonly enabled: boolean, private readonly logger: Logger) {}
  /** Structured info at this verbosity. */
  info(msg: string, kv?: KeysAndValues): void {
    if (this.enabled) this.logger.emitS(0, undefined, msg, kv, 1);
  }
  /** klog's V(n).ErrorS: an error line, only when this verbosity is enabled. */
  error(err: unknown, msg: string, kv?: KeysAndValues): void {
    if (this.enabled) this.logger.emitS(2, err, msg, kv, 1);
  }
  /** Printf-style info at this verbosity. */
  infof(format: string, ...args: unknown[]): void {
    if (this.enabled) this.logger.emitText(0, sprintf(format, ...args), 1);
  }
}

const DISABLED_CACHE = new WeakMap<Logger, Verbose>();

export class Logger {
  private readonly verboseCache: Verbose[] = [];
  /**
   * @param module file name (without extension) used for --vmodule; when absent, the caller's
   *   file is looked up from the stack, which only happens when --vmodule is in use.
   * @param values key/value pairs written on every line (withValues).
   * @param depth extra stack frames to skip for the caller's file:line (wrappers).
   */
  constructor(readonly module?: string, private readonly values: readonly [string, unknown][] = [], private readonly depth = 0) {}

  /** A logger that adds these key/value pairs to every line. */
  withValues(kv: KeysAndValues): Logger {
    const pairs: [string, unknown][] = [...this.values];
    toPairs(kv, pairs);
    return new Logger(this.module, pairs, this.depth);
  }

  /** A logger for helpers: reports the caller `depth` frames further up. */
  withCallDepth(depth: number): Logger {
    return new Logger(this.module, this.values, this.depth + depth);
  }

  /** Whether `v(level)` would write; as cheap as a comparison unless --vmodule is in use. */
  enabled(level: number): boolean {
    if (state.verbosity >= level) return true;
    if (state.vmoduleMax < level) return false;
    return this.vmoduleAllows(level, 2);
  }

  private vmoduleAllows(level: number, skip: number): boolean {
    let file = this.module;
    if (file === undefined) {
      const site = rawCaller(skip + this.depth);
      if (!site) return false;
      // the source file's name, as in the log header (a bundle's chunk is not a module of ours)
      const e = sourceMapFor(site.file)?.find(site.line - 1, site.col - 1);
      file = moduleName(e ? e.source : site.file);
    }
    return vmoduleLevel(file) >= level;
  }

  /** klog.V(level). */
  v(level: number): Verbose {
    let on: boolean;
    if (state.verbosity >= level) on = true;
    else if (state.vmoduleMax < level) on = false;
    else on = this.vmoduleAllows(level, 2);
    if (!on) {
      let d = DISABLED_CACHE.get(this);
      if (!d) DISABLED_CACHE.set(this, (d = new Verbose(false, this)));
      return d;
    }
    if (level >= 0 && level < 32) return (this.verboseCache[level] ??= new Verbose(true, this));
    return new Verbose(true, this);
  }

  /** klog.InfoS: `I... "msg" k="v"`. */
  info(msg: string, kv?: KeysAndValues): void { this.emitS(0, undefined, msg, kv, 1); }
  /** klog.WarningS-style structured warning (severity W). */
  warn(msg: string, kv?: KeysAndValues): void { this.emitS(1, undefined, msg, kv, 1); }
  /** Alias of warn. */
  warning(msg: string, kv?: KeysAndValues): void { this.emitS(1, undefined, msg, kv, 1); }
  /** klog.ErrorS: `E... "msg" err="..." k="v"`; a null err is left out. */
  error(err: unknown, msg: string, kv?: KeysAndValues): void { this.emitS(2, err, msg, kv, 1); }
  /** Writes an F line with the stack, then exits with code 255 (klog.Fatal). */
  fatal(msg: string, kv?: KeysAndValues): never {
    this.emitS(3, undefined, msg, kv, 1);
    return this.die();
  }
  /** ErrorS then exit 255, for a fatal error value. */
  fatalErr(err: unknown, msg: string, kv?: KeysAndValues): never {
    this.emitS(3, err, msg, kv, 1);
    return this.die();
  }

  infof(format: string, ...args: unknown[]): void { this.emitText(0, sprintf(format, ...args), 1); }
  warningf(format: string, ...args: unknown[]): void { this.emitText(1, sprintf(format, ...args), 1); }
  errorf(format: string, ...args: unknown[]): void { this.emitText(2, sprintf(format, ...args), 1); }
  fatalf(format: string, ...args: unknown[]): never {
    this.emitText(3, sprintf(format, ...args), 1);
    return this.die();
  }

  private die(): never {
    const stack = new Error('fatal').stack?.split('\n').slice(1).join('\n') ?? '';
    (state.splitStream ? state.errorOutput : state.output).write(`goroutine 1 [running]:\n${stack}\n`);
    return state.exit(255);
  }

  /** @internal */
  emitS(sev: Severity, err: unknown, msg: string, kv: KeysAndValues | undefined, skip: number): void {
    const body = goQuote(msg) + formatKVs(this.values.length ? this.values.flat() : undefined, err === undefined || err === null ? undefined : ['err', err], kv);
    emit(sev, body, skip + 1 + this.depth);
  }

  /** @internal */
  emitText(sev: Severity, text: string, skip: number): void {
    emit(sev, text + (this.values.length ? formatKVs(this.values.flat()) : ''), skip + 1 + this.depth);
  }
}

/** The process-wide logger. */
export const log = new Logger();

/**
 * A logger bound to a source file, so --vmodule decisions need no stack lookup:
 * `const log = forModule(import.meta.url);`
 */
export function forModule(fileOrUrl: string): Logger {
  const file = fileOrUrl.startsWith('file:') ? fileURLToPath(fileOrUrl) : fileOrUrl;
  return new Logger(moduleName(file));
}

// ── flags ──────────────────────────────────────────────────────────────────

/** The feature gates component-base's logging registers. */
export const loggingFeatureSpecs: Record<string, FeatureSpec> = {
  ContextualLogging: { default: true, preRelease: 'BETA' },
  LoggingAlphaOptions: { default: false, preRelease: 'ALPHA' },
  LoggingBetaOptions: { default: true, preRelease: 'BETA' },
};

/** The Level value of -v (component-base's VerbosityLevelPflag). */
export class LevelValue implements Value {
  set(s: string): void {
    configure({ verbosity: Number(parseGoUint(s, 10, 31)) });
  }
  toString(): string { return String(state.verbosity); }
  type(): string { return 'Level'; }
  get(): number { return state.verbosity; }
}

/** The --vmodule value; repeated flags add patterns. */
export class VModuleValue implements Value {
  set(s: string): void {
    configure({ vmodule: [...state.vmodule, ...parseVModule(s)] });
  }
  toString(): string { return state.vmodule.map((m) => `${m.filePattern}=${m.verbosity}`).join(','); }
  type(): string { return 'pattern=N,...'; }
}

/**
 * Adds the logging flags component-base's logs.AddFlags adds: --logging-format,
 * --log-flush-frequency, -v/--v, --vmodule, --log-text-split-stream, --log-text-info-buffer-size.
 * Their values take effect in this module as they are parsed.
 */
export function addFlags(fs: FlagSet): void {
  const live = <T>(get: () => T, set: (v: T) => void) => ({ get, set });
  fs.var(new StringValue(live(() => state.format, (v) => { state.format = v; })), 'logging-format', 'Sets the log format. Permitted formats: "text".');
  fs.var(new DurationValue(live(() => state.flushFrequency, (v) => { state.flushFrequency = v; })), 'log-flush-frequency', 'Maximum number of seconds between log flushes');
  fs.var(new LevelValue(), 'v', 'number for the log level verbosity', { shorthand: 'v' });
  fs.var(new VModuleValue(), 'vmodule', 'comma-separated list of pattern=N settings for file-filtered logging (only works for text log format)');
  fs.var(new BoolValue(live(() => state.splitStream, (v) => { state.splitStream = v; })), 'log-text-split-stream',
    '[Alpha] In text format, write error messages to stderr and info messages to stdout. The default is to write a single stream to stderr. Enable the LoggingAlphaOptions feature gate to use this.');
  fs.var(new QuantityValue(live(() => state.infoBufferSize, (v) => { state.infoBufferSize = v; })), 'log-text-info-buffer-size',
    '[Alpha] In text format with split output streams, the info messages can be buffered for a while to increase performance. The default value of zero bytes disables buffering. The size can be specified as number of bytes (512), multiples of 1000 (1k), multiples of 1024 (2Ki), or powers of those (3M, 4G, 5Mi, 6Gi). Enable the LoggingAlphaOptions feature gate to use this.');
}

/**
 * What the Kubernetes daemons put in their "Global flags:" section: component-base's
 * globalflag.AddGlobalFlags (the logging flags and `-h, --help`) plus verflag's `--version`
 * (leave it out with `{ version: false }`).
 */
export function addGlobalFlags(fs: FlagSet, commandName: string, opts: { version?: boolean } = {}): void {
  addFlags(fs);
  fs.var(new BoolValue(holder(false)), 'help', `help for ${commandName}`, { shorthand: 'h' });
  if (opts.version ?? true) fs.version();
}

/**
 * Checks the logging settings as component-base's ValidateAndApply does; returns error messages.
 * Pass the daemon's feature gate to allow the alpha options when LoggingAlphaOptions is on.
 */
export function validateAndApply(gate?: FeatureGate): string[] {
  const errs: string[] = [];
  if (state.format !== 'text') errs.push(`format: Unsupported value: ${goQuote(state.format)}: supported values: "text"`);
  let alpha = false;
  try { alpha = gate ? gate.enabled('LoggingAlphaOptions') : false; } catch { alpha = false; }
  if (!alpha) {
    if (state.splitStream) errs.push('options.text.splitStream: Forbidden: Feature LoggingAlphaOptions is disabled');
    if (state.infoBufferSize !== '0' && state.infoBufferSize !== '') errs.push('options.text.infoBufferSize: Forbidden: Feature LoggingAlphaOptions is disabled');
  }
  if (gate) gate.onWarning = (msg, kv) => log.withCallDepth(1).info(msg, kv);
  return errs;
}

/** component-base's cliflag.PrintFlags: logs `FLAG: --name="value"` for every flag at V(1). */
export function printFlags(fs: FlagSet, level = 1): void {
  const v = log.v(level);
  if (!v.enabled) return;
  fs.visitAll((f) => v.infof('FLAG: --%s=%q', f.name, f.value.toString()));
}

/** Resets logging to its defaults (tests). */
export function resetForTests(): void {
  configure({
    verbosity: 0, vmodule: [], flushFrequency: 5000, format: 'text', splitStream: false, infoBufferSize: '0',
    output: stderrSink, infoOutput: fdSink(1), errorOutput: stderrSink, callerLookup: true, utc: false, now: defaultNow,
    pid: process.pid, exit: (code: number) => process.exit(code),
  });
}
