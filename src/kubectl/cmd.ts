// The kubectl-style command shell used by `keelson patch`: kubectl's global options (connection,
// -v logging, profiling, --warnings-as-errors, the kuberc preferences), pflag parsing with
// kubectl's error wording, kubectl's help layout ("Examples:", "Options:", "Usage:"), and
// cmdutil.CheckErr's rendering of errors and exit codes.

import { writeFileSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { namedProfile, processProfiler, type CPUProfileRun } from '../client/profiling.js';
import { encodeProfile, type ProfileData } from '../codec/pprof.js';
import { BoolValue, DurationValue, FlagSet, StringArrayValue, StringValue, holder, wordSepNormalize, type Flag, HelpRequested } from '../cli/flags.js';
import { LevelValue, VModuleValue } from '../cli/klog.js';
import { StatusError } from '../machinery/errors.js';
import { TransportError } from '../client/rest.js';
import { ConfigurationInvalidError, ConnectionError, defaultConfigFlags, type ConfigFlagValues } from './factory.js';
import { NoResourceMatchError } from './discovery.js';
import { AggregateError } from './resource.js';
import { yamlToJSONDocuments } from './goyaml.js';

export interface Writer {
  write(s: string): unknown;
}

export interface KubectlIO {
  stdout: Writer;
  stderr: Writer;
  readStdin: () => Promise<string>;
  env: NodeJS.ProcessEnv;
  /** whether stdout is a terminal, and its width (for help wrapping) */
  stdoutColumns?: number;
  /** whether stderr is a color terminal (warnings are then colored, as kubectl's) */
  colorWarnings?: boolean;
}

/** The values of kubectl's global (persistent) flags. */
export interface GlobalOptions {
  config: ConfigFlagValues;
  profile: string;
  profileOutput: string;
  warningsAsErrors: boolean;
  kuberc: string;
}

/** An error that only sets the exit code (cmdutil.ErrExit). */
export class ExitError extends Error {
  constructor(readonly code = 1) {
    super('exit');
  }
}

function stringFlag(fs: FlagSet, o: Record<string, any>, key: string, name: string, usage: string, opts: { shorthand?: string; hidden?: boolean } = {}): Flag<string> {
  return fs.var<string>(new StringValue({ get: () => o[key], set: (v: string) => (o[key] = v) }), name, usage, opts);
}

function boolFlag(fs: FlagSet, o: Record<string, any>, key: string, name: string, usage: string, opts: { shorthand?: string; hidden?: boolean } = {}): Flag<boolean> {
  return fs.var<boolean>(new BoolValue({ get: () => o[key], set: (v: boolean) => (o[key] = v) }), name, usage, opts);
}

/** kubectl's persistent flags, in a FlagSet; returns the options they fill. */
export function addGlobalFlags(fs: FlagSet, env: NodeJS.ProcessEnv): GlobalOptions {
  const g: GlobalOptions = { config: defaultConfigFlags(env), profile: 'none', profileOutput: 'profile.pprof', warningsAsErrors: false, kuberc: '' };
  const c = g.config as unknown as Record<string, any>;
  stringFlag(fs, g, 'profile', 'profile', 'Name of profile to capture. One of (none|cpu|heap|goroutine|threadcreate|block|mutex)');
  stringFlag(fs, g, 'profileOutput', 'profile-output', 'Name of the file to write the profile to');
  boolFlag(fs, g, 'warningsAsErrors', 'warnings-as-errors', 'Treat warnings received from the server as errors and exit with a non-zero exit code');
  if (kubercEnabled(env)) {
    stringFlag(fs, g, 'kuberc', 'kuberc', 'Path to the kuberc file to use for preferences. This can be disabled by exporting KUBECTL_KUBERC=false.');
  }
  // keelson's name for the preferences file: accepted unless KUBECTL_KUBERC=false
  if ((env.KUBECTL_KUBERC ?? '').toLowerCase() !== 'false') {
    stringFlag(fs, g, 'kuberc', 'rc', 'Path to the preferences (kuberc) file. This can be disabled by exporting KUBECTL_KUBERC=false.', { hidden: true });
  }
  stringFlag(fs, c, 'kubeconfig', 'kubeconfig', 'Path to the kubeconfig file to use for CLI requests.');
  stringFlag(fs, c, 'cacheDir', 'cache-dir', 'Default cache directory');
  stringFlag(fs, c, 'clientCertificate', 'client-certificate', 'Path to a client certificate file for TLS');
  stringFlag(fs, c, 'clientKey', 'client-key', 'Path to a client key file for TLS');
  stringFlag(fs, c, 'token', 'token', 'Bearer token for authentication to the API server');
  stringFlag(fs, c, 'as', 'as', 'Username to impersonate for the operation. User could be a regular user or a service account in a namespace.');
  stringFlag(fs, c, 'asUid', 'as-uid', 'UID to impersonate for the operation.');
  fs.var(new StringArrayValue({ get: () => g.config.asGroup, set: (v: string[]) => (g.config.asGroup = v) }), 'as-group', 'Group to impersonate for the operation, this flag can be repeated to specify multiple groups.');
  stringFlag(fs, c, 'username', 'username', 'Username for basic authentication to the API server');
  stringFlag(fs, c, 'password', 'password', 'Password for basic authentication to the API server');
  stringFlag(fs, c, 'cluster', 'cluster', 'The name of the kubeconfig cluster to use');
  stringFlag(fs, c, 'user', 'user', 'The name of the kubeconfig user to use');
  stringFlag(fs, c, 'namespace', 'namespace', 'If present, the namespace scope for this CLI request', { shorthand: 'n' });
  stringFlag(fs, c, 'context', 'context', 'The name of the kubeconfig context to use');
  stringFlag(fs, c, 'server', 'server', 'The address and port of the Kubernetes API server', { shorthand: 's' });
  stringFlag(fs, c, 'tlsServerName', 'tls-server-name', 'Server name to use for server certificate validation. If it is not provided, the hostname used to contact the server is used');
  boolFlag(fs, c, 'insecureSkipTLSVerify', 'insecure-skip-tls-verify', "If true, the server's certificate will not be checked for validity. This will make your HTTPS connections insecure");
  stringFlag(fs, c, 'certificateAuthority', 'certificate-authority', 'Path to a cert file for the certificate authority');
  stringFlag(fs, c, 'requestTimeout', 'request-timeout', "The length of time to wait before giving up on a single server request. Non-zero values should contain a corresponding time unit (e.g. 1s, 2m, 3h). A value of zero means don't timeout requests.");
  boolFlag(fs, c, 'disableCompression', 'disable-compression', 'If true, opt-out of response compression for all requests to the server');
  boolFlag(fs, c, 'matchServerVersion', 'match-server-version', 'Require server version to match client version');
  // logging (component-base: -v, --vmodule, --log-flush-frequency)
  fs.var(new LevelValue(), 'v', 'number for the log level verbosity', { shorthand: 'v' });
  fs.var(new VModuleValue(), 'vmodule', 'comma-separated list of pattern=N settings for file-filtered logging (only works for the default text log format)');
  fs.var(new DurationValue(holder(5000)), 'log-flush-frequency', 'Maximum number of seconds between log flushes');
  // cAdvisor's storage-driver options, which old kubectl releases inherited: accepted, no effect
  const ignored: [string, 'string' | 'bool' | 'duration', string][] = [
    ['storage-driver-buffer-duration', 'duration', 'Writes in the storage driver will be buffered for this duration, and committed to the non memory backends as a single transaction (no effect)'],
    ['storage-driver-db', 'string', 'database name (no effect)'],
    ['storage-driver-host', 'string', 'database host:port (no effect)'],
    ['storage-driver-password', 'string', 'database password (no effect)'],
    ['storage-driver-secure', 'bool', 'use secure connection with database (no effect)'],
    ['storage-driver-table', 'string', 'table name (no effect)'],
    ['storage-driver-user', 'string', 'database username (no effect)'],
  ];
  const defaults: Record<string, string> = { 'storage-driver-db': 'cadvisor', 'storage-driver-host': 'localhost:8086', 'storage-driver-password': 'root', 'storage-driver-table': 'stats', 'storage-driver-user': 'root' };
  for (const [name, type, usage] of ignored) {
    if (type === 'bool') fs.var(new BoolValue(holder(false)), name, usage, { hidden: true });
    else if (type === 'duration') fs.var(new DurationValue(holder(60000)), name, usage, { hidden: true });
    else fs.var(new StringValue(holder(defaults[name] ?? '')), name, usage, { hidden: true });
  }
  return g;
}

export function kubercEnabled(env: NodeJS.ProcessEnv): boolean {
  return (env.KUBECTL_KUBERC ?? '').toLowerCase() === 'true';
}

// ── help ─────────────────────────────────────────────────────────────────────

/** mitchellh/go-wordwrap's WrapString. */
export function wordWrap(s: string, lim: number): string {
  if (lim <= 0) return s;
  let out = '';
  let current = 0;
  let word = '';
  let space = '';
  let spaceWidth = 0;
  let wordWidth = 0;
  for (const ch of s) {
    if (ch === '\n') {
      if (word === '') {
        if (current + spaceWidth > lim) current = 0;
        else {
          current += spaceWidth;
          out += space;
        }
        space = '';
        spaceWidth = 0;
      } else {
        current += spaceWidth + wordWidth;
        out += space + word;
        space = '';
        spaceWidth = 0;
        word = '';
        wordWidth = 0;
      }
      out += ch;
      current = 0;
    } else if (/\s/.test(ch) && ch !== '\u00a0') {
      if (space === '' || word !== '') {
        current += spaceWidth + wordWidth;
        out += space + word;
        space = '';
        word = '';
        spaceWidth = 0;
        wordWidth = 0;
      }
      space += ch;
      spaceWidth++;
    } else {
      word += ch;
      wordWidth++;
      if (current + spaceWidth + wordWidth > lim && wordWidth < lim) {
        out += '\n';
        current = 0;
        space = '';
        spaceWidth = 0;
      }
    }
  }
  if (word === '') {
    if (current + spaceWidth <= lim) out += space;
  } else out += space + word;
  return out;
}

/** One flag in kubectl's help format: `    -f, --filename=[]:` then the usage on a tab-indented line. */
function helpFlagLine(f: Flag<any>, wrapLimit: number): string {
  const def = f.value.type() === 'string' ? `'${f.defValue}'` : f.defValue;
  const deprecated = f.deprecated ? ` (DEPRECATED: ${f.deprecated})` : '';
  const head = f.shorthand ? `    -${f.shorthand}, --${f.name}=${def}:` : `    --${f.name}=${def}:`;
  let body = f.usage + deprecated;
  if (wrapLimit > 0) body = wordWrap(body.split('\n').join(' '), wrapLimit - 10);
  return (head + '\n' + body).split('\n').join('\n\t') + '\n\n';
}

export interface HelpSpec {
  /** the long description, already formatted as kubectl prints it */
  long: string;
  /** the examples block, each line indented by two spaces */
  example: string;
  /** the usage line after the program name: `patch (-f FILENAME | TYPE NAME) [-p PATCH|--patch-file FILE]` */
  use: string;
}

/** kubectl's help: long text, Examples, Options (local flags), Usage and the global-options hint. */
export function helpText(spec: HelpSpec, local: FlagSet, program: string, wrapLimit = 0): string {
  let out = spec.long.trim() + '\n\n';
  if (spec.example) out += `Examples:\n${spec.example.trimEnd()}\n\n`;
  const flags = local.all().filter((f) => !f.hidden && f.name !== 'help');
  if (flags.length) out += 'Options:\n' + flags.map((f) => helpFlagLine(f, wrapLimit)).join('').trimEnd() + '\n\n';
  out += `Usage:\n  ${program} ${spec.use} [options]\n\n`;
  out += `Use "${program} options" for a list of global command-line options (applies to all commands).\n`;
  return out;
}

/** `<program> options`: the global flags. */
export function optionsText(global: FlagSet, wrapLimit = 0): string {
  const flags = global.all().filter((f) => !f.hidden && f.name !== 'help');
  return 'The following options can be passed to any command:\n\n' + flags.map((f) => helpFlagLine(f, wrapLimit)).join('');
}

// ── errors (cmdutil.CheckErr) ────────────────────────────────────────────────

function isStatus(e: unknown): e is StatusError {
  return e instanceof StatusError;
}

/** StandardErrorMessage: the message for errors kubectl knows, or undefined. */
export function standardErrorMessage(e: unknown): string | undefined {
  if (isStatus(e)) {
    if (e.reason === 'Unauthorized') return `error: You must be logged in to the server (${e.message})`;
    if (e.reason) return `Error from server (${e.reason}): ${e.message}`;
    return `Error from server: ${e.message}`;
  }
  if (e instanceof ConnectionError) {
    if (e.refused) return `The connection to the server ${e.host} was refused - did you specify the right host or port?`;
    return `Unable to connect to the server: ${e.detail}`;
  }
  return undefined;
}

function messageForError(e: Error): string {
  return standardErrorMessage(e) ?? e.message;
}

function multilineError(prefix: string, errs: string[]): string {
  if (errs.length === 1) return `${prefix}${errs[0]}\n`;
  return `${prefix}\n` + errs.map((m) => `* ${m}\n`).join('');
}

/** cmdutil.CheckErr: the text kubectl prints for an error (ends with a newline) and the exit code. */
export function checkErr(err: unknown): { message: string; code: number } {
  let e = err as Error;
  if (e instanceof AggregateError && e.errors.length === 1) e = e.errors[0]!;
  if (e instanceof ExitError) return { message: '', code: e.code };
  if (isStatus(e) && e.reason === 'Invalid') {
    const details = e.details;
    let s = 'The request is invalid';
    if (!details) {
      if (e.message) s += ': ' + e.message;
      return { message: s + '\n', code: 1 };
    }
    if (details.kind || details.name) s = `The ${details.kind ?? ''} ${JSON.stringify(details.name ?? '')} is invalid`;
    else if (e.message && !details.causes?.length) s += ': ' + e.message;
    if (details.causes?.length) {
      const msgs: string[] = [];
      for (const c of details.causes) {
        const m = `${c.field ?? ''}: ${c.message ?? ''}`;
        if (!msgs.includes(m)) msgs.push(m);
      }
      return { message: multilineError(s + ': ', msgs), code: 1 };
    }
    return { message: s + '\n', code: 1 };
  }
  if (e instanceof ConfigurationInvalidError) return { message: multilineError('Error in configuration: ', e.errors), code: 1 };
  if (e instanceof NoResourceMatchError) {
    const p = e.partial;
    let msg: string;
    if (p.group && p.version) msg = `the server doesn't have a resource type "${p.resource}" in group "${p.group}" and version "${p.version}"`;
    else if (p.group) msg = `the server doesn't have a resource type "${p.resource}" in group "${p.group}"`;
    else if (p.version) msg = `the server doesn't have a resource type "${p.resource}" in version "${p.version}"`;
    else msg = `the server doesn't have a resource type "${p.resource}"`;
    return { message: msg + '\n', code: 1 };
  }
  if (e instanceof AggregateError) return { message: e.errors.map((x) => messageForError(x) + '\n').join(''), code: 1 };
  let msg = standardErrorMessage(e);
  if (msg === undefined) {
    msg = e instanceof Error ? e.message : String(e);
    if (!msg.startsWith('error: ')) msg = `error: ${msg}`;
  }
  if (!msg.endsWith('\n')) msg += '\n';
  return { message: msg, code: 1 };
}

/** Wraps transport failures from the REST client into kubectl's connection errors. */
export function asConnectionError(e: unknown, describe: (t: TransportError) => ConnectionError): unknown {
  if (e instanceof TransportError) return describe(e);
  if (e instanceof AggregateError) return new AggregateError(e.errors.map((x) => asConnectionError(x, describe) as Error));
  return e;
}

// ── profiling (--profile) ────────────────────────────────────────────────────

/**
 * kubectl's --profile (its profiling.go), written in Go's pprof format (client/profiling.ts,
 * codec/pprof.ts), so that `go tool pprof` reads it:
 *   - cpu: V8's CPU profiler from the start of the command to its end; --profile-output is created
 *     at the start, as kubectl creates it, and written at the end;
 *   - heap: V8's sampling heap profiler from the start; at the end a full garbage collection (as
 *     kubectl's runtime.GC), then the live objects it sampled (inuse_space);
 *   - allocs: the same, without the collection (V8 keeps no record of objects already collected);
 *   - block, mutex: an empty profile with Go's sample types (Node.js has no contention profiler);
 *   - goroutine, threadcreate, trace and any other name: `unknown profile '<name>'`, kubectl's
 *     error for a profile its runtime does not have (JavaScript has no goroutines).
 * As in kubectl, an interrupt (ctrl-c) writes the profile, and the command exits 0.
 */
export class Profiler {
  private cpu: CPUProfileRun | undefined;
  private onInterrupt: (() => void) | undefined;
  private started = false;
  private stopped = false;
  constructor(
    private readonly name: string,
    private readonly output: string,
  ) {}

  async start(): Promise<void> {
    switch (this.name) {
      case 'none':
        return;
      case 'cpu':
        writeFileSync(this.output, '');
        this.cpu = await processProfiler().startCPU();
        break;
      case 'heap':
      case 'allocs':
        await processProfiler().startHeapSampling();
        break;
      default:
        if (!namedProfile(this.name)) throw new Error(`unknown profile '${this.name}'`);
    }
    this.started = true;
    this.onInterrupt = () => {
      void this.stop()
        .catch(() => undefined)
        .finally(() => process.exit(0));
    };
    process.once('SIGINT', this.onInterrupt);
  }

  async stop(): Promise<void> {
    if (!this.started || this.stopped) return;
    this.stopped = true;
    if (this.onInterrupt) process.off('SIGINT', this.onInterrupt);
    const p = processProfiler();
    let profile: ProfileData;
    if (this.cpu) profile = await this.cpu.stop();
    else {
      if (this.name === 'heap') await p.collectGarbage();
      profile = await namedProfile(this.name)!(p);
    }
    writeFileSync(this.output, encodeProfile(profile));
  }
}

// ── kuberc (KUBECTL_KUBERC=true) ─────────────────────────────────────────────

/** Was the flag given on the command line (kuberc's searchInArgs)? */
function givenInArgs(f: Flag<any>, args: readonly string[]): boolean {
  for (const a of args) {
    if (a === '--') break;
    if (a === `--${f.name}` || a.startsWith(`--${f.name}=`)) return true;
    if (f.shorthand && a.startsWith('-') && !a.startsWith('--') && a.slice(1).split('=')[0]!.includes(f.shorthand)) {
      if (a[1] === f.shorthand) return true;
    }
  }
  return false;
}

/**
 * Applies the kuberc `overrides` for `command` to flags not given on the command line. Returns
 * an error message (kubectl prints "error occurred while applying preferences ..." and exits 1).
 */
export function applyKuberc(fs: FlagSet, command: string, args: readonly string[], env: NodeJS.ProcessEnv, stderr: Writer): string | undefined {
  if (args.length === 0) return undefined;
  let explicit = '';
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') break;
    if (a === '--kuberc' || a === '--rc') {
      if (i + 1 < args.length) {
        explicit = args[i + 1]!;
        break;
      }
      return 'kuberc file is not found';
    }
    const m = /^--(?:kuberc|rc)=(.*)$/.exec(a);
    if (m) {
      if (m[1]) {
        explicit = m[1];
        break;
      }
      return 'kuberc file is not found';
    }
  }
  if (env.KUBERC === 'off') {
    if (explicit) return 'kuberc error disabling kuberc via KUBERC=off and passing kuberc flag are mutually exclusive';
    return undefined;
  }
  let file = explicit || join(env.HOME ?? '', '.kube', 'kuberc');
  let explicitly = !!explicit;
  if (!explicit && env.KUBERC) {
    file = env.KUBERC;
    explicitly = true;
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (!explicitly && err.code === 'ENOENT') return undefined;
    const why = `open ${file}: ${err.code === 'ENOENT' ? 'no such file or directory' : err.message}`;
    if (explicitly) return `kuberc error kuberc: ${why}`;
    stderr.write(`kuberc: no preferences loaded from ${file}: ${why}`);
    return undefined;
  }
  let pref: any;
  try {
    pref = yamlToJSONDocuments(text)[0];
  } catch (e) {
    return `kuberc error kuberc: ${(e as Error).message}`;
  }
  if (!pref || typeof pref !== 'object') return undefined;
  for (const o of (pref.overrides ?? []) as any[]) {
    for (const fl of (o.flags ?? []) as any[]) {
      if (typeof fl.name === 'string' && fl.name.startsWith('-')) return `flag name ${fl.name} should be in long form without dashes`;
    }
  }
  for (const o of (pref.overrides ?? []) as any[]) {
    if (typeof o.command !== 'string' || o.command.trim() !== command) continue;
    for (const fl of (o.flags ?? []) as any[]) {
      const f = fs.lookup(fl.name);
      if (!f) return `invalid flag ${fl.name} for command ${o.command}`;
      if (givenInArgs(f, args)) continue;
      try {
        fs.set(fl.name, String(fl.default ?? ''));
      } catch (e) {
        return `could not apply override value ${fl.default} to flag ${fl.name} in command ${o.command} err: ${(e as Error).message}`;
      }
    }
  }
  return undefined;
}

// ── the command ──────────────────────────────────────────────────────────────

export interface KubectlCommandSpec {
  name: string;
  short: string;
  help: HelpSpec;
  /** declares the command's local flags; returns a function reading their values */
  flags: (fs: FlagSet) => void;
  /** the work; returns normally on success, throws for kubectl's error handling */
  run: (ctx: RunContext) => Promise<void>;
  /** skip the global flags (the `options` command) */
  noGlobals?: boolean;
}

export interface RunContext {
  args: string[];
  flags: FlagSet;
  global: GlobalOptions;
  io: KubectlIO;
  program: string;
  commandPath: string;
  /** raises the warning count for --warnings-as-errors */
  warningCount: () => number;
  setWarningCounter: (f: () => number) => void;
}

/** Runs a kubectl-style command with `argv` (after the command name); returns the exit code. */
export async function runKubectlCommand(spec: KubectlCommandSpec, argv: readonly string[], io: KubectlIO, program = 'keelson'): Promise<number> {
  const commandPath = `${program} ${spec.name}`;
  const local = new FlagSet(spec.name, { normalize: wordSepNormalize, output: io.stderr });
  spec.flags(local);
  local.var(new BoolValue(holder(false)), 'help', `help for ${spec.name}`, { shorthand: 'h' });
  const globalSet = new FlagSet('global', { normalize: wordSepNormalize, output: io.stderr });
  const global = addGlobalFlags(globalSet, io.env);
  const all = new FlagSet(spec.name, { normalize: wordSepNormalize, output: io.stderr });
  all.addFlagSet(local);
  if (!spec.noGlobals) all.addFlagSet(globalSet);

  const fail = (message: string, code = 1): number => {
    if (message) io.stderr.write(message.endsWith('\n') ? message : message + '\n');
    return code;
  };

  const rcGiven = argv.some((a) => a === '--rc' || a.startsWith('--rc=')) && (io.env.KUBECTL_KUBERC ?? '').toLowerCase() !== 'false';
  if ((kubercEnabled(io.env) || rcGiven) && !spec.noGlobals) {
    const err = applyKuberc(all, spec.name, argv, io.env, io.stderr);
    if (err) return fail(`error occurred while applying preferences ${err}`);
  }
  try {
    all.parse(argv);
  } catch (e) {
    if (e instanceof HelpRequested) {
      io.stdout.write(helpText(spec.help, local, program, io.stdoutColumns ?? 0));
      return 0;
    }
    return fail(`error: ${(e as Error).message}\nSee '${commandPath} --help' for usage.`);
  }
  if (all.lookup('help')?.get() === true) {
    io.stdout.write(spec.noGlobals ? optionsText(globalSet) : helpText(spec.help, local, program, io.stdoutColumns ?? 0));
    return 0;
  }
  const profiler = new Profiler(global.profile, global.profileOutput);
  let warnings = () => 0;
  try {
    await profiler.start();
    await spec.run({ args: all.args(), flags: all, global, io, program, commandPath, warningCount: () => warnings(), setWarningCounter: (f) => (warnings = f) });
  } catch (e) {
    const { message, code } = checkErr(e);
    try {
      await profiler.stop();
    } catch {
      /* the error wins */
    }
    return fail(message, code);
  }
  try {
    await profiler.stop();
  } catch (e) {
    return fail(checkErr(e).message);
  }
  if (global.warningsAsErrors) {
    const n = warnings();
    if (n === 1) return fail('error: 1 warning received');
    if (n > 1) return fail(`error: ${n} warnings received`);
  }
  return 0;
}

