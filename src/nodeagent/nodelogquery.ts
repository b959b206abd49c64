// The kubelet's node log query (enableSystemLogQuery with the NodeLogQuery gate): /logs/ with a
// query string reads a service's log from journald, or from a file under the node's log directory,
// as `kubectl get --raw "/api/v1/nodes/<node>/proxy/logs/?query=kubelet&tailLines=10"` asks:
//   - query (repeatable): a name without `/` or `\` is a service (at most 4; letters, digits,
//     `-`, `_` and `@`), one with them is a file under the log directory (one, without options);
//   - sinceTime, untilTime (RFC 3339), tailLines (0 to 100000), boot (0 or less), pattern (a
//     regular expression) go to journalctl: `--utc --no-pager --output=short-precise
//     [--since=..] [--until=..] [--pager-end --lines=N] --unit=<service>... [--grep=..] [--boot N]`;
//   - a service journald does not know (`journalctl --field _SYSTEMD_UNIT` lists no
//     `<service>.service`, or there is no journalctl) is looked for as a file: /var/log/<service>,
//     <service>.log, then <service>/<service>.log; with options that is refused in the answer;
//   - a malformed parameter is 400, a query that does not validate 406 (`path not allowed in query
//     mode` for a query beside a path), each with the kubelet's field error text;
//   - the answer is text/plain;charset=UTF-8, gzipped when the request's Accept-Encoding is
//     exactly `gzip`; what goes wrong later is written into it (`log not found for foo`).
// A request without any of these parameters is the file server's (systemlogs.ts).
import { execFile, spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, posix, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { SYSTEM_LOG_DIR } from './systemlogs.js';

const MAX_TAIL_LINES = 100_000;
const MAX_SERVICE_LENGTH = 256;
const MAX_SERVICES = 4;
const UNSAFE_SERVICE_CHARS = /[^a-zA-Z\-_0-9@]+/;
/** the deadline of one query's commands and copies (the kubelet's 30 s) */
const DEADLINE_MS = 30_000;

/** a time as parsed from RFC 3339, with the offset it was written in (Go's time keeps it) */
interface QueryTime {
  ms: number;
  offsetMinutes: number;
}

export interface NodeLogQuery {
  services: string[];
  files: string[];
  sinceTime?: QueryTime;
  untilTime?: QueryTime;
  tailLines?: number;
  boot?: number;
  pattern: string;
}

function hasOptions(q: NodeLogQuery): boolean {
  return q.sinceTime !== undefined || q.untilTime !== undefined || q.tailLines !== undefined || q.boot !== undefined || q.pattern !== '';
}

/** Go's %#v of a []string */
function goStrings(v: string[]): string {
  return `[]string{${v.map((s) => JSON.stringify(s)).join(', ')}}`;
}

/** field.ErrorList's aggregate: one error as it is, more in brackets */
function aggregate(errs: string[]): string {
  return errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`;
}

/** Go's strconv.Atoi */
function atoi(s: string): number | string {
  if (!/^[+-]?\d+$/.test(s)) return `strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`;
  const n = Number(s);
  if (!Number.isSafeInteger(n)) return `strconv.Atoi: parsing ${JSON.stringify(s)}: value out of range`;
  return n;
}

/** Go's time.Parse(time.RFC3339, s) */
function parseRFC3339(s: string): QueryTime | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/.exec(s);
  if (!m) return undefined;
  const ms = Date.parse(s.toUpperCase());
  if (Number.isNaN(ms)) return undefined;
  const offsetMinutes = m[8]!.toUpperCase() === 'Z' ? 0 : (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  return { ms, offsetMinutes };
}

/** the wall clock of a QueryTime in its own offset */
function wall(t: QueryTime): Date {
  return new Date(t.ms + t.offsetMinutes * 60_000);
}

/** journalctl's argument: Go's Format("2006-1-2 15:4:5") in the time's own offset */
function journalTime(t: QueryTime): string {
  const d = wall(t);
  return `${d.getUTCFullYear()}-${d.getUTCMonth() + 1}-${d.getUTCDate()} ${d.getUTCHours()}:${d.getUTCMinutes()}:${d.getUTCSeconds()}`;
}

/** Go's time.Time String(): 2006-01-02 15:04:05.999999999 -0700 MST */
function goTimeString(t: QueryTime): string {
  const d = wall(t);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const frac = d.getUTCMilliseconds() ? `.${p(d.getUTCMilliseconds(), 3).replace(/0+$/, '')}` : '';
  const sign = t.offsetMinutes < 0 ? '-' : '+';
  const off = `${sign}${p(Math.floor(Math.abs(t.offsetMinutes) / 60))}${p(Math.abs(t.offsetMinutes) % 60)}`;
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}${frac} ${off} ${t.offsetMinutes === 0 ? 'UTC' : off}`;
}

/**
 * The kubelet's newNodeLogQuery: undefined when the request has none of the parameters (the file
 * server answers it), else the query, or its parameters' errors (400).
 */
export function parseNodeLogQuery(params: URLSearchParams): { query?: NodeLogQuery; errors: string[] } {
  const errors: string[] = [];
  const q: NodeLogQuery = { services: [], files: [], pattern: '' };
  const queries = params.getAll('query');
  for (const v of queries) {
    if (/[/\\]/.test(v)) q.files.push(v);
    else if (v.trim() !== '') q.services.push(v);
  }
  if (params.has('query') && q.files.length === 0 && q.services.length === 0) errors.push(`query: Invalid value: ${goStrings(queries)}: query cannot be empty`);
  const first = (k: string) => params.get(k) ?? '';
  for (const k of ['sinceTime', 'untilTime'] as const) {
    const v = first(k);
    if (!v) continue;
    const t = parseRFC3339(v);
    if (!t) errors.push(`${k}: Invalid value: ${JSON.stringify(v)}: invalid time format`);
    else q[k] = t;
  }
  for (const k of ['boot', 'tailLines'] as const) {
    const v = first(k);
    if (!v) continue;
    const n = atoi(v);
    if (typeof n === 'string') errors.push(`${k}: Invalid value: ${JSON.stringify(v)}: ${n}`);
    else q[k] = n;
  }
  q.pattern = first('pattern');
  if (errors.length) return { errors };
  if (!q.services.length && !q.files.length && !hasOptions(q)) return { errors };
  return { query: q, errors };
}

/** the file a name under the log directory stands for, kept inside it (securejoin's way: `..` stops at the root) */
function underLogDir(root: string, name: string): string {
  return join(root, posix.normalize('/' + name.replace(/\\/g, '/')));
}

/** the kubelet's validate(): the errors of a query (406) */
export async function validateNodeLogQuery(q: NodeLogQuery, root = SYSTEM_LOG_DIR): Promise<string[]> {
  const errs: string[] = [];
  for (const s of q.services) {
    if (s.length > MAX_SERVICE_LENGTH) errs.push(`query: Invalid value: ${JSON.stringify(s)}: length must be less than 100`);
    else if (UNSAFE_SERVICE_CHARS.test(s)) errs.push(`query: Invalid value: ${JSON.stringify(s)}: input contains unsupported characters`);
  }
  if (q.services.length > MAX_SERVICES) errs.push(`query: Too many: ${q.services.length}: must have at most ${MAX_SERVICES} items`);
  if (!q.files.length && !q.services.length) errs.push('query: Required value: cannot be empty with options');
  else if (q.files.length && q.services.length) errs.push(`query: Invalid value: ${JSON.stringify(`[${q.files.join(' ')}], [${q.services.join(' ')}]`)}: cannot specify a file and service`);
  else if (q.files.length > 1) errs.push(`query: Invalid value: ${goStrings(q.files)}: cannot specify more than one file`);
  else if (q.files.length === 1 && hasOptions(q)) errs.push(`query: Invalid value: ${goStrings(q.files)}: cannot specify file with options`);
  else if (q.files.length === 1) {
    const full = underLogDir(root, q.files[0]!);
    try {
      await stat(full);
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (e as Error).message;
      errs.push(`query: Invalid value: ${goStrings(q.files)}: stat ${full}: ${why}`);
    }
  }
  if (q.sinceTime && q.untilTime && q.sinceTime.ms > q.untilTime.ms) errs.push(`untilTime: Invalid value: ${JSON.stringify(goTimeString(q.untilTime))}: must be after \`sinceTime\``);
  if (q.boot !== undefined && q.boot > 0) errs.push(`boot: Invalid value: ${q.boot}: must be less than 1`);
  if (q.tailLines !== undefined && (q.tailLines < 0 || q.tailLines > MAX_TAIL_LINES)) errs.push(`tailLines: Invalid value: ${q.tailLines}: must be between 0 and ${MAX_TAIL_LINES}, inclusive`);
  if (q.pattern) {
    try {
      new RegExp(q.pattern);
    } catch (e) {
      errs.push(`pattern: Invalid value: ${JSON.stringify(q.pattern)}: error parsing regexp: ${(e as Error).message}`);
    }
  }
  return errs;
}

/** journalctl's arguments for the services (the kubelet's getLoggingCmd on Linux) */
export function journalctlArgs(q: NodeLogQuery, services: string[]): string[] {
  const args = ['--utc', '--no-pager', '--output=short-precise'];
  if (q.sinceTime) args.push(`--since=${journalTime(q.sinceTime)}`);
  if (q.untilTime) args.push(`--until=${journalTime(q.untilTime)}`);
  if (q.tailLines !== undefined) args.push('--pager-end', `--lines=${q.tailLines}`);
  for (const s of services) if (s) args.push(`--unit=${s}`);
  if (q.pattern) args.push(`--grep=${q.pattern}`);
  if (q.boot !== undefined) args.push('--boot', String(q.boot));
  return args;
}

export interface NodeLogQueryOptions {
  /** the node's log directory (/var/log) */
  root?: string;
  /** the journalctl command (default: journalctl on the PATH) */
  journalctl?: string;
}

/** writes to the answer, respecting its back-pressure */
interface Out {
  write(s: string | Buffer): Promise<void>;
  stream: NodeJS.WritableStream;
}

/** the units journald has logs of (journalctl --field _SYSTEMD_UNIT, as text); '' without journalctl */
function journaldUnits(journalctl: string): Promise<string> {
  return new Promise((resolve) => {
    execFile(journalctl, ['--field', '_SYSTEMD_UNIT'], { encoding: 'utf8', timeout: DEADLINE_MS, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      resolve(err ? '' : `${stdout}${stderr}`);
    });
  });
}

async function copyJournal(out: Out, journalctl: string, args: string[], boot: number): Promise<void> {
  await new Promise<void>((resolve) => {
    const child = spawn(journalctl, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), DEADLINE_MS);
    child.stdout.pipe(out.stream, { end: false });
    child.stderr.pipe(out.stream, { end: false });
    child.once('error', () => {
      clearTimeout(timer);
      // (not an exit status: the command could not run)
      if (boot === 0) void out.write('\nerror: journal output not available\n').then(resolve, resolve);
      else resolve();
    });
    child.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** the kubelet's heuristics: /var/log/<service>, <service>.log, <service>/<service>.log, the first that is a file */
async function copyServiceFile(out: Out, root: string, service: string): Promise<void> {
  let base: string;
  try {
    base = await realpath(root);
  } catch {
    await out.write(`\nlog not found for ${service}\n`);
    return;
  }
  for (const name of [service, `${service}.log`, `${service}/${service}.log`]) {
    let full: string;
    try {
      full = await realpath(underLogDir(base, name));
      if (full !== base && !full.startsWith(base + sep)) continue;
      if ((await stat(full)).isDirectory()) continue;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') continue;
      await out.write(`\nerror getting log for ${service}: ${(e as Error).message}\n`);
      return;
    }
    try {
      await pipeline(createReadStream(full), out.stream, { end: false });
    } catch (e) {
      await out.write(`\nerror getting log for ${service}: ${(e as Error).message}\n`);
    }
    return;
  }
  await out.write(`\nlog not found for ${service}\n`);
}

/** answers a validated query of services (the kubelet's journalServer) */
export async function serveNodeLogQuery(req: IncomingMessage, res: ServerResponse, q: NodeLogQuery, o: NodeLogQueryOptions = {}): Promise<void> {
  const root = o.root ?? SYSTEM_LOG_DIR;
  const journalctl = o.journalctl ?? 'journalctl';
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/plain;charset=UTF-8');
  let stream: NodeJS.WritableStream = res;
  let gz: ReturnType<typeof createGzip> | undefined;
  if (req.headers['accept-encoding'] === 'gzip') {
    res.setHeader('Content-Encoding', 'gzip');
    gz = createGzip({ level: 1 });
    gz.pipe(res);
    stream = gz;
  }
  const out: Out = {
    stream,
    write: (s) =>
      new Promise((resolve) => {
        if (stream.write(s)) resolve();
        else stream.once('drain', () => resolve());
      }),
  };
  const native: string[] = [];
  const files: string[] = [];
  // (asked once for all the services: the kubelet asks once per service)
  const units = await journaldUnits(journalctl);
  for (const s of q.services) (units.includes(`${s}.service`) ? native : files).push(s);
  if (native.length) await copyJournal(out, journalctl, journalctlArgs(q, native), q.boot ?? 0);
  if (files.length && hasOptions(q)) {
    await out.write(`\noptions present and query resolved to log files for [${files.join(' ')}]\ntry without specifying options\n`);
  } else {
    for (const s of files) await copyServiceFile(out, root, s);
  }
  if (gz) {
    // (the gzip stream ends the answer once it has flushed what it holds)
    await new Promise<void>((resolve) => {
      res.once('close', resolve);
      gz!.end();
    });
  } else res.end();
}
