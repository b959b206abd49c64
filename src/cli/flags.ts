// A pflag-compatible command-line flag parser, shared by every Keelson daemon.
//
// The behaviour (argument syntax, error wording, help layout, value formats) follows
// spf13/pflag v1.0.6, spf13/cobra and k8s.io/component-base/cli/flag as Kubernetes 1.33 uses
// them, so that `keelson <daemon> --help` and its errors read like the Kubernetes daemons'.
//
// The pieces:
//   - Go-compatible scalar parsing and printing (strconv, time.Duration, encoding/csv)
//   - Value: the pflag.Value interface, and one implementation per flag type
//   - Flag and FlagSet: declaration, parsing, `changed` tracking, usage text
//   - NamedFlagSets and printSections: the "Generic flags:" sections of Kubernetes help
//   - FeatureGate: the registry behind --feature-gates
//   - loadConfigFile: a YAML/JSON config file into the same options object, flags winning
//   - Command: a small cobra-like command with subcommands, help and --version handling

import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { yamlModule } from '../codec/yamlmodule.js';
import { getVersionInfo, formatVersionRaw, formatVersionLine, setDynamicVersion } from './version.js';
import { goFloat, goFormatDuration, goParseDuration, goQuote, goQuoteList } from '../machinery/gostrings.js';

// `yaml` is loaded on first use: most runs read no config file, and it costs ~40 ms to load.
const yaml = yamlModule;

// ─────────────────────────────────────────────────────────────────────────────
// Go-compatible scalar helpers
// ─────────────────────────────────────────────────────────────────────────────

function numError(fn: string, s: string, what: 'invalid syntax' | 'value out of range'): Error {
  return new Error(`strconv.${fn}: parsing ${goQuote(s)}: ${what}`);
}

/** Go's underscoreOK: `_` may only separate digits (or follow a 0b/0o/0x prefix). */
function underscoreOK(s: string): boolean {
  let saw = '^';
  let i = 0;
  if (s.length >= 1 && (s[0] === '-' || s[0] === '+')) s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === '0' && 'bBoOxX'.includes(s[1]!)) {
    i = 2;
    saw = '0';
    hex = s[1] === 'x' || s[1] === 'X';
  }
  for (; i < s.length; i++) {
    const c = s[i]!;
    if ((c >= '0' && c <= '9') || (hex && /[a-fA-F]/.test(c))) { saw = '0'; continue; }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

/** Go's ParseUint digit loop; null on bad syntax. */
function goUnsigned(s0: string, base: number): bigint | null {
  if (s0 === '') return null;
  let s = s0;
  const base0 = base === 0;
  if (base0) {
    base = 10;
    if (s[0] === '0') {
      const p = s.length >= 3 ? s[1]!.toLowerCase() : '';
      if (p === 'b') { base = 2; s = s.slice(2); }
      else if (p === 'o') { base = 8; s = s.slice(2); }
      else if (p === 'x') { base = 16; s = s.slice(2); }
      else { base = 8; s = s.slice(1); }
    }
  }
  let v = 0n;
  const b = BigInt(base);
  let underscores = false;
  for (const c of s) {
    if (c === '_' && base0) { underscores = true; continue; }
    const d = /[0-9a-zA-Z]/.test(c) ? parseInt(c, 36) : NaN;
    if (Number.isNaN(d) || d >= base) return null;
    v = v * b + BigInt(d);
  }
  if (underscores && !underscoreOK(s0)) return null;
  return v;
}

/** Go's strconv.ParseInt(s, base, bitSize). Returns a bigint; throws Go's errors. */
export function parseGoInt(s: string, base = 0, bitSize = 64): bigint {
  let body = s;
  let neg = false;
  if (body.startsWith('+') || body.startsWith('-')) { neg = body[0] === '-'; body = body.slice(1); }
  const u = goUnsigned(body, base);
  if (u === null) throw numError('ParseInt', s, 'invalid syntax');
  const v = neg ? -u : u;
  const max = (1n << BigInt(bitSize - 1)) - 1n;
  const min = -(1n << BigInt(bitSize - 1));
  if (v > max || v < min) throw numError('ParseInt', s, 'value out of range');
  return v;
}

/** Go's strconv.ParseUint(s, base, bitSize). */
export function parseGoUint(s: string, base = 0, bitSize = 64): bigint {
  const u = s.startsWith('+') || s.startsWith('-') ? null : goUnsigned(s, base);
  if (u === null) throw numError('ParseUint', s, 'invalid syntax');
  if (u > (1n << BigInt(bitSize)) - 1n) throw numError('ParseUint', s, 'value out of range');
  return u;
}

const FLOAT_RE = /^[+-]?(?:(?:\d(?:_?\d)*)(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d+)?$/;
const HEX_FLOAT_RE = /^[+-]?0[xX](?:[0-9a-fA-F_]+(?:\.[0-9a-fA-F_]*)?|\.[0-9a-fA-F_]+)[pP][+-]?\d+$/;

/** Go's strconv.ParseFloat(s, 64). */
export function parseGoFloat(s: string): number {
  const lower = s.toLowerCase();
  const unsigned = lower.replace(/^[+-]/, '');
  if (unsigned === 'inf' || unsigned === 'infinity') return lower.startsWith('-') ? -Infinity : Infinity;
  if (unsigned === 'nan' && lower === 'nan') return NaN;
  if (HEX_FLOAT_RE.test(s)) {
    const m = /^([+-]?)0[xX]([0-9a-fA-F_]*)(?:\.([0-9a-fA-F_]*))?[pP]([+-]?\d+)$/.exec(s)!;
    const int = (m[2] ?? '').replace(/_/g, '');
    const frac = (m[3] ?? '').replace(/_/g, '');
    let v = int ? parseInt(int, 16) : 0;
    for (let i = 0; i < frac.length; i++) v += parseInt(frac[i]!, 16) / 16 ** (i + 1);
    v *= 2 ** parseInt(m[4]!, 10);
    return m[1] === '-' ? -v : v;
  }
  if (!FLOAT_RE.test(s)) throw numError('ParseFloat', s, 'invalid syntax');
  const v = Number(s.replace(/_/g, ''));
  if (!Number.isFinite(v)) throw numError('ParseFloat', s, 'value out of range');
  return v;
}

/** Go's strconv.ParseBool. */
export function parseGoBool(s: string): boolean {
  switch (s) {
    case '1': case 't': case 'T': case 'TRUE': case 'true': case 'True': return true;
    case '0': case 'f': case 'F': case 'FALSE': case 'false': case 'False': return false;
  }
  throw numError('ParseBool', s, 'invalid syntax');
}

// Durations ------------------------------------------------------------------

/** Milliseconds (a JS number, possibly fractional) to nanoseconds, exactly for whole milliseconds. */
export function msToNs(ms: number): bigint {
  const whole = Math.trunc(ms);
  return BigInt(whole) * 1000000n + BigInt(Math.round((ms - whole) * 1e6));
}

/** Go duration syntax to milliseconds: `parseDuration('1m30s') === 90000`. */
export function parseDuration(s: string): number {
  const ns = goParseDuration(s);
  const ms = ns / 1000000n;
  return Number(ms) + Number(ns % 1000000n) / 1e6;
}

/** Milliseconds to Go's canonical duration text: `formatDuration(300000) === '5m0s'`. */
export function formatDuration(ms: number): string {
  return goFormatDuration(msToNs(ms));
}

// CSV (a single record, as Go's encoding/csv reads and writes flag values) -------

/** Reads one CSV record as Go's csv.Reader does for pflag's slice flags. */
export function readCSVRecord(val: string): string[] {
  if (val === '') return [];
  const fields: string[] = [];
  let i = 0;
  const err = (col: number, msg: string) => new Error(`parse error on line 1, column ${col}: ${msg}`);
  for (;;) {
    if (val[i] === '"') {
      // quoted field
      let field = '';
      let j = i + 1;
      for (;;) {
        const q = val.indexOf('"', j);
        if (q < 0) {
          // Go reports an unterminated quote at the end of input.
          throw err(val.length + 1, 'extraneous or missing " in quoted-field');
        }
        field += val.slice(j, q);
        if (val[q + 1] === '"') { field += '"'; j = q + 2; continue; }
        if (q + 1 === val.length) { fields.push(field); return fields; }
        if (val[q + 1] === ',') { fields.push(field); i = q + 2; break; }
        throw err(q + 2, 'extraneous or missing " in quoted-field');
      }
      if (i === val.length) { fields.push(''); return fields; }
      continue;
    }
    const comma = val.indexOf(',', i);
    const field = comma < 0 ? val.slice(i) : val.slice(i, comma);
    const bare = field.indexOf('"');
    if (bare >= 0) throw err(i + bare + 1, 'bare " in non-quoted-field');
    fields.push(field.replace(/\r?\n$/, ''));
    if (comma < 0) return fields;
    i = comma + 1;
    if (i === val.length) { fields.push(''); return fields; }
  }
}

function csvFieldNeedsQuotes(f: string): boolean {
  if (f === '') return false;
  if (f === '\\.') return true;
  if (/[",\r\n]/.test(f)) return true;
  return /^\s/u.test(f);
}

/** Writes one CSV record as Go's csv.Writer does (without the trailing newline). */
export function writeCSVRecord(vals: readonly string[]): string {
  return vals.map((f) => (csvFieldNeedsQuotes(f) ? '"' + f.replace(/"/g, '""') + '"' : f)).join(',');
}

// Quantities ---------------------------------------------------------------------

const QUANTITY_RE = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const QUANTITY_SUFFIXES = new Set(['', 'n', 'u', 'm', 'k', 'M', 'G', 'T', 'P', 'E', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei']);

/** Checks a Kubernetes resource quantity string (`512`, `1K`, `2Ki`, `1.5Gi`, `1e3`); throws Kubernetes' error. */
export function validateQuantity(s: string): string {
  const t = s.trim();
  const m = QUANTITY_RE.exec(t);
  const bad = () => new Error("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  if (!m) throw bad();
  const num = m[1]!;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(num)) throw bad();
  const suf = m[2]!;
  if (!QUANTITY_SUFFIXES.has(suf) && !/^[eE][-+]?\d+$/.test(suf)) throw new Error('unable to parse quantity\'s suffix');
  return t;
}

// ─────────────────────────────────────────────────────────────────────────────
// Values
// ─────────────────────────────────────────────────────────────────────────────

/** pflag.Value: a flag's value that can be set from text, printed and named. */
export interface Value {
  /** Parses and stores `s`; throws an Error whose message becomes the tail of pflag's "invalid argument" error. */
  set(s: string): void;
  /** The value as pflag's String() prints it (used for defaults in help). */
  toString(): string;
  /** The type name shown in help (`string`, `duration`, `mapStringBool`, ...). */
  type(): string;
  /** True for values that take no separate argument (`--x` means `--x=true`). */
  isBoolFlag?(): boolean;
}

/** A Value with a typed getter and setter, and a conversion from config-file data. */
export interface TypedValue<T> extends Value {
  get(): T;
  replace(v: T): void;
  /** Converts a value read from a YAML/JSON config file; throws on a bad value. */
  fromConfig?(raw: unknown): T;
  /** How a changed flag combines with a config-file value for the same field (maps merge per key). */
  mergeOverConfig?(config: T, flag: T): T;
}

/** Storage for a value: a property of an options object, or a private holder. */
export interface Slot<T> {
  get(): T;
  set(v: T): void;
  /** The object and property this slot writes, when it is a property slot. */
  readonly target?: object;
  readonly key?: PropertyKey;
}

export function holder<T>(initial: T): Slot<T> {
  let v = initial;
  return { get: () => v, set: (x) => { v = x; } };
}

export function slotOf<O extends object, K extends keyof O>(o: O, k: K): Slot<O[K]> {
  return { get: () => o[k], set: (x) => { o[k] = x; }, target: o, key: k };
}

abstract class BaseValue<T> implements TypedValue<T> {
  protected changed = false;
  constructor(protected readonly slot: Slot<T>) {}
  get(): T { return this.slot.get(); }
  replace(v: T): void { this.slot.set(v); }
  abstract set(s: string): void;
  abstract toString(): string;
  abstract type(): string;
}

function typeError(what: string, raw: unknown): Error {
  return new Error(`expected ${what}, got ${raw === null ? 'null' : Array.isArray(raw) ? 'array' : typeof raw} ${JSON.stringify(raw)}`);
}

export class BoolValue extends BaseValue<boolean> {
  set(s: string): void { this.slot.set(parseGoBool(s)); }
  toString(): string { return String(this.slot.get()); }
  type(): string { return 'bool'; }
  isBoolFlag(): boolean { return true; }
  fromConfig(raw: unknown): boolean {
    if (typeof raw === 'boolean') return raw;
    throw typeError('a boolean', raw);
  }
}

export type IntKind = 'int' | 'int32' | 'int64' | 'int16' | 'int8' | 'uint' | 'uint32' | 'uint64' | 'uint16' | 'uint8';
const INT_BITS: Record<IntKind, [number, boolean]> = {
  int: [64, true], int64: [64, true], int32: [32, true], int16: [16, true], int8: [8, true],
  uint: [64, false], uint64: [64, false], uint32: [32, false], uint16: [16, false], uint8: [8, false],
};

export class IntValue extends BaseValue<number> {
  constructor(slot: Slot<number>, private readonly kind: IntKind = 'int') { super(slot); }
  set(s: string): void {
    const [bits, signed] = INT_BITS[this.kind];
    const v = signed ? parseGoInt(s, 0, bits) : parseGoUint(s, 0, bits);
    this.slot.set(Number(v));
  }
  toString(): string { return String(this.slot.get()); }
  type(): string { return this.kind; }
  fromConfig(raw: unknown): number {
    if (typeof raw === 'number' && Number.isInteger(raw)) {
      const [bits, signed] = INT_BITS[this.kind];
      const b = BigInt(raw);
      const max = signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
      const min = signed ? -(1n << BigInt(bits - 1)) : 0n;
      if (b > max || b < min) throw new Error(`value ${raw} out of range for ${this.kind}`);
      return raw;
    }
    throw typeError('an integer', raw);
  }
}

export class Float64Value extends BaseValue<number> {
  set(s: string): void { this.slot.set(parseGoFloat(s)); }
  toString(): string { return goFloat(this.slot.get()); }
  type(): string { return 'float64'; }
  fromConfig(raw: unknown): number {
    if (typeof raw === 'number') return raw;
    throw typeError('a number', raw);
  }
}

export class StringValue extends BaseValue<string> {
  set(s: string): void { this.slot.set(s); }
  toString(): string { return this.slot.get(); }
  type(): string { return 'string'; }
  fromConfig(raw: unknown): string {
    if (typeof raw === 'string') return raw;
    throw typeError('a string', raw);
  }
}

/** A string restricted to a set of values (help shows it as `string`). */
export class EnumValue extends StringValue {
  constructor(slot: Slot<string>, private readonly allowed: readonly string[]) { super(slot); }
  override set(s: string): void {
    if (!this.allowed.includes(s)) throw new Error(`supported values: ${this.allowed.map((a) => goQuote(a)).join(', ')}`);
    super.set(s);
  }
}

export class StringSliceValue extends BaseValue<string[]> {
  set(s: string): void {
    const v = readCSVRecord(s);
    this.slot.set(this.changed ? [...this.slot.get(), ...v] : v);
    this.changed = true;
  }
  toString(): string { return '[' + writeCSVRecord(this.slot.get()) + ']'; }
  type(): string { return 'stringSlice'; }
  fromConfig(raw: unknown): string[] {
    if (Array.isArray(raw) && raw.every((x) => typeof x === 'string')) return raw as string[];
    throw typeError('a list of strings', raw);
  }
}

export class StringArrayValue extends BaseValue<string[]> {
  set(s: string): void {
    this.slot.set(this.changed ? [...this.slot.get(), s] : [s]);
    this.changed = true;
  }
  toString(): string { return '[' + writeCSVRecord(this.slot.get()) + ']'; }
  type(): string { return 'stringArray'; }
  fromConfig(raw: unknown): string[] {
    if (Array.isArray(raw) && raw.every((x) => typeof x === 'string')) return raw as string[];
    throw typeError('a list of strings', raw);
  }
}

/** A Go time.Duration flag; the value is held in milliseconds. */
export class DurationValue extends BaseValue<number> {
  set(s: string): void { this.slot.set(parseDuration(s)); }
  toString(): string { return formatDuration(this.slot.get()); }
  type(): string { return 'duration'; }
  fromConfig(raw: unknown): number {
    if (typeof raw === 'string') return parseDuration(raw);
    throw typeError('a duration string such as "5m0s"', raw);
  }
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function mapFromConfig<V>(raw: unknown, what: string, check: (v: unknown) => v is V): Record<string, V> {
  if (!isPlainObject(raw)) throw typeError(what, raw);
  for (const v of Object.values(raw)) if (!check(v)) throw typeError(what, raw);
  return { ...(raw as Record<string, V>) };
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';

/** pflag's stringToString: `a=b,c=d`; repeated flags add keys; printed `[a=b,c=d]`. */
export class StringToStringValue extends BaseValue<Record<string, string>> {
  set(val: string): void {
    let pairs: string[];
    const n = val.split('=').length - 1;
    if (n === 0) throw new Error(`${val} must be formatted as key=value`);
    else if (n === 1) pairs = [val.replace(/^"+|"+$/g, '')];
    else pairs = readCSVRecord(val);
    const out: Record<string, string> = {};
    for (const pair of pairs) {
      const eq = pair.indexOf('=');
      if (eq < 0) throw new Error(`${pair} must be formatted as key=value`);
      out[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    this.slot.set(this.changed ? { ...this.slot.get(), ...out } : out);
    this.changed = true;
  }
  toString(): string {
    const m = this.slot.get();
    const records = Object.keys(m).sort().map((k) => k + '=' + m[k]);
    return '[' + writeCSVRecord(records).trim() + ']';
  }
  type(): string { return 'stringToString'; }
  fromConfig(raw: unknown): Record<string, string> { return mapFromConfig(raw, 'a map of strings', isString); }
  mergeOverConfig(config: Record<string, string>, flag: Record<string, string>): Record<string, string> { return { ...config, ...flag }; }
}

/** component-base's MapStringBool (`--feature-gates` style `A=true,B=false`). */
export class MapStringBoolValue extends BaseValue<Record<string, boolean>> {
  set(value: string): void {
    const m: Record<string, boolean> = this.changed ? { ...this.slot.get() } : {};
    for (const s of value.split(',')) {
      if (s.length === 0) continue;
      const eq = s.indexOf('=');
      if (eq < 0) throw new Error('malformed pair, expect string=bool');
      const k = s.slice(0, eq).trim();
      const v = s.slice(eq + 1).trim();
      let b: boolean;
      try { b = parseGoBool(v); } catch (e) { throw new Error(`invalid value of ${k}: ${v}, err: ${(e as Error).message}`); }
      m[k] = b;
    }
    this.slot.set(m);
    this.changed = true;
  }
  toString(): string {
    const m = this.slot.get();
    if (!m) return '';
    return Object.keys(m).map((k) => `${k}=${m[k]}`).sort().join(',');
  }
  type(): string { return 'mapStringBool'; }
  fromConfig(raw: unknown): Record<string, boolean> { return mapFromConfig(raw, 'a map of booleans', isBool); }
  mergeOverConfig(config: Record<string, boolean>, flag: Record<string, boolean>): Record<string, boolean> { return { ...config, ...flag }; }
}

/**
 * component-base's MapStringString (`key=value` pairs lists such as --kube-reserved), with the
 * LangleSeparated variant (`memory.available<1Gi` for --eviction-hard) and the NoSplit variant.
 */
export class MapStringStringValue extends BaseValue<Record<string, string>> {
  constructor(slot: Slot<Record<string, string>>, private readonly sep: '=' | '<' = '=', private readonly noSplit = false) { super(slot); }
  set(value: string): void {
    const m: Record<string, string> = this.changed ? { ...this.slot.get() } : {};
    const parts = this.noSplit ? [value] : value.split(',');
    for (const s of parts) {
      if (s.length === 0 && !this.noSplit) continue;
      const i = s.indexOf(this.sep);
      if (i < 0) throw new Error(`malformed pair, expect string${this.sep}string`);
      m[s.slice(0, i).trim()] = s.slice(i + 1).trim();
    }
    this.slot.set(m);
    this.changed = true;
  }
  toString(): string {
    const m = this.slot.get();
    if (!m) return '';
    return Object.keys(m).map((k) => `${k}${this.sep}${m[k]}`).sort().join(',');
  }
  type(): string { return 'mapStringString'; }
  fromConfig(raw: unknown): Record<string, string> { return mapFromConfig(raw, 'a map of strings', isString); }
  mergeOverConfig(config: Record<string, string>, flag: Record<string, string>): Record<string, string> { return { ...config, ...flag }; }
}

/** component-base's ColonSeparatedMultimapStringString: `a:x,a:y,b:z` → {a:[x,y], b:[z]}. */
export class ColonSeparatedMultimapValue extends BaseValue<Record<string, string[]>> {
  constructor(slot: Slot<Record<string, string[]>>, private readonly allowDefaultEmptyKey = false) { super(slot); }
  set(value: string): void {
    const m: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(this.changed ? this.slot.get() : {})) m[k] = [...v];
    for (const pair of value.split(',')) {
      if (pair.length === 0) continue;
      const i = pair.indexOf(':');
      let k = '';
      let v: string;
      if (this.allowDefaultEmptyKey && i < 0) v = pair.trim();
      else {
        if (i < 0) throw new Error('malformed pair, expect string:string');
        k = pair.slice(0, i).trim();
        v = pair.slice(i + 1).trim();
      }
      (m[k] ??= []).push(v);
    }
    this.slot.set(m);
    this.changed = true;
  }
  toString(): string {
    const m = this.slot.get();
    return Object.keys(m).sort().flatMap((k) => m[k]!.map((v) => `${k}:${v}`)).join(',');
  }
  type(): string { return 'colonSeparatedMultimapStringString'; }
}

export class Int32SliceValue extends BaseValue<number[]> {
  set(val: string): void {
    const out = val.split(',').map((d) => Number(parseGoInt(d, 0, 32)));
    this.slot.set(this.changed ? [...this.slot.get(), ...out] : out);
    this.changed = true;
  }
  toString(): string { return '[' + this.slot.get().join(',') + ']'; }
  type(): string { return 'int32Slice'; }
  fromConfig(raw: unknown): number[] {
    if (Array.isArray(raw) && raw.every((x) => typeof x === 'number' && Number.isInteger(x) && x >= -(2 ** 31) && x < 2 ** 31)) return raw as number[];
    throw typeError('a list of int32', raw);
  }
}

/** A resource quantity (`--log-text-info-buffer-size`), held as its text. */
export class QuantityValue extends BaseValue<string> {
  set(s: string): void { this.slot.set(validateQuantity(s)); }
  toString(): string { return this.slot.get() || '0'; }
  type(): string { return 'quantity'; }
  fromConfig(raw: unknown): string {
    if (typeof raw === 'number') return validateQuantity(String(raw));
    if (typeof raw === 'string') return validateQuantity(raw);
    throw typeError('a quantity', raw);
  }
}

/** pflag's ip flag; an empty value means unset (printed `<nil>`). */
export class IPValue extends BaseValue<string> {
  set(s: string): void {
    if (s === '') return;
    const t = s.trim();
    if (!isIP(t)) throw new Error(`failed to parse IP: ${goQuote(s)}`);
    this.slot.set(t);
  }
  toString(): string { return this.slot.get() || '<nil>'; }
  type(): string { return 'ip'; }
  fromConfig(raw: unknown): string {
    if (typeof raw === 'string' && (raw === '' || isIP(raw))) return raw;
    throw typeError('an IP address', raw);
  }
}

export interface NamedCertKey { certFile: string; keyFile: string; names: string[] }

/** component-base's NamedCertKeyArray (--tls-sni-cert-key `cert,key:name1,name2`). */
export class NamedCertKeyArrayValue extends BaseValue<NamedCertKey[]> {
  set(value: string): void {
    const colon = value.indexOf(':');
    let keycert: string;
    let names: string[] = [];
    if (colon >= 0) {
      keycert = value.slice(0, colon).trim();
      const n = value.slice(colon + 1).trim();
      if (n === '') throw new Error('empty names list is not allowed');
      names = n.split(',').map((x) => x.trim());
    } else keycert = value.trim();
    const cs = keycert.split(',');
    if (cs.length !== 2) throw new Error('expected comma separated certificate and key file paths');
    const nkc = { certFile: cs[0]!.trim(), keyFile: cs[1]!.trim(), names };
    this.slot.set(this.changed ? [...this.slot.get(), nkc] : [nkc]);
    this.changed = true;
  }
  toString(): string {
    return '[' + this.slot.get().map((n) => n.certFile + ',' + n.keyFile + (n.names.length ? ':' + n.names.join(',') : '')).join(';') + ']';
  }
  type(): string { return 'namedCertKey'; }
}

export type VersionFlagState = 'false' | 'true' | 'raw' | string;

/** component-base's verflag value: `--version`, `--version=raw`, `--version=v1.33.0+keelson.0.1.0`. */
export class VersionValue extends BaseValue<VersionFlagState> {
  set(s: string): void {
    if (s === 'raw') { this.slot.set('raw'); return; }
    if (s.startsWith('v')) { setDynamicVersion(s); this.slot.set(s); return; }
    this.slot.set(parseGoBool(s) ? 'true' : 'false');
  }
  toString(): string { return this.slot.get(); }
  type(): string { return 'version'; }
  isBoolFlag(): boolean { return true; }
}

/** A Value backed by callbacks, for one-off custom types. */
export class FuncValue implements Value {
  constructor(private readonly typeName: string, private readonly onSet: (s: string) => void, private readonly show: () => string = () => '') {}
  set(s: string): void { this.onSet(s); }
  toString(): string { return this.show(); }
  type(): string { return this.typeName; }
}

// ─────────────────────────────────────────────────────────────────────────────
// Errors
// ─────────────────────────────────────────────────────────────────────────────

/** Any error from parsing flags (cobra calls these flag errors and prints usage for them). */
export class FlagError extends Error {
  override name = 'FlagError';
}
export class NotExistError extends FlagError {}
export class ValueRequiredError extends FlagError {}
export class InvalidValueError extends FlagError {
  constructor(message: string, readonly flag: Flag, readonly value: string, override readonly cause: Error) { super(message); }
}
export class InvalidSyntaxError extends FlagError {}
/** pflag.ErrHelp: -h/--help given and not defined as a flag. */
export class HelpRequested extends FlagError {
  constructor() { super('pflag: help requested'); }
}

// ─────────────────────────────────────────────────────────────────────────────
// Flag and FlagSet
// ─────────────────────────────────────────────────────────────────────────────

export interface Writer { write(s: string): unknown }

export interface FlagOptions {
  /** One-letter shorthand, used as `-x`. */
  shorthand?: string;
  /** Marks the flag deprecated with this message. Deprecated flags are hidden unless `hidden: false`. */
  deprecated?: string;
  /** Marks only the shorthand deprecated. */
  shorthandDeprecated?: string;
  /** Leaves the flag out of help. */
  hidden?: boolean;
  /** The value used when the flag is given without `=value` (bool flags: "true"). */
  noOptDefVal?: string;
  /** Free-form annotations, as pflag's. */
  annotations?: Record<string, string[]>;
}

export class Flag<T = unknown> {
  readonly name: string;
  shorthand: string;
  usage: string;
  readonly value: Value;
  defValue: string;
  noOptDefVal: string;
  changed = false;
  deprecated: string;
  shorthandDeprecated: string;
  hidden: boolean;
  annotations: Record<string, string[]>;

  constructor(name: string, value: Value, usage: string, opts: FlagOptions = {}) {
    this.name = name;
    this.value = value;
    this.usage = usage;
    this.shorthand = opts.shorthand ?? '';
    this.defValue = value.toString();
    this.noOptDefVal = opts.noOptDefVal ?? (value.isBoolFlag?.() ? 'true' : '');
    this.deprecated = opts.deprecated ?? '';
    this.shorthandDeprecated = opts.shorthandDeprecated ?? '';
    this.hidden = opts.hidden ?? this.deprecated !== '';
    this.annotations = opts.annotations ?? {};
  }

  /** The current typed value. */
  get(): T {
    const v = this.value as Partial<TypedValue<T>>;
    if (typeof v.get === 'function') return v.get();
    return this.value.toString() as unknown as T;
  }

  /** Whether pflag would print no "(default ...)" for this flag. */
  defaultIsZeroValue(): boolean {
    const t = this.value.type();
    if (this.value.isBoolFlag?.()) return this.defValue === 'false';
    switch (t) {
      case 'duration': return this.defValue === '0' || this.defValue === '0s';
      case 'int': case 'int8': case 'int16': case 'int32': case 'int64':
      case 'uint': case 'uint8': case 'uint16': case 'uint32': case 'uint64':
      case 'count': case 'float32': case 'float64':
        return this.defValue === '0';
      case 'string': return this.defValue === '';
      case 'ip': case 'ipMask': case 'ipNet': return this.defValue === '<nil>';
      case 'intSlice': case 'stringSlice': case 'stringArray': return this.defValue === '[]';
      default:
        return this.defValue === 'false' || this.defValue === '<nil>' || this.defValue === '' || this.defValue === '0';
    }
  }
}

export type NormalizeFunc = (name: string) => string;

/** component-base's WordSepNormalizeFunc: `--foo_bar` is `--foo-bar`. */
export const wordSepNormalize: NormalizeFunc = (name) => name.replace(/_/g, '-');

type KeysOfType<O, V> = { [K in keyof O]-?: O[K] extends V ? (V extends O[K] ? K : never) : never }[keyof O];

export interface FlagSetOptions {
  /** Where deprecation notices go (pflag's Output()); stderr by default. */
  output?: Writer;
  normalize?: NormalizeFunc;
  /** Help lists flags sorted by name (pflag's default) or in declaration order. */
  sortFlags?: boolean;
  /** Flags may follow positional arguments (pflag's default). */
  interspersed?: boolean;
}

export class FlagSet {
  readonly name: string;
  sortFlags: boolean;
  interspersed: boolean;
  output: Writer;
  private normalizeFn: NormalizeFunc;
  private readonly formal = new Map<string, Flag<any>>();
  private readonly shorthands = new Map<string, Flag<any>>();
  private orderedFormal: Flag<any>[] = [];
  private positional: string[] = [];
  private dashAt = -1;
  /** the flags the last parse set, in the order given, with their values as given (pflag's ParseAll sees them so) */
  private given: { name: string; value: string }[] = [];
  private wasParsed = false;

  constructor(name = '', opts: FlagSetOptions = {}) {
    this.name = name;
    this.sortFlags = opts.sortFlags ?? true;
    this.interspersed = opts.interspersed ?? true;
    this.output = opts.output ?? process.stderr;
    this.normalizeFn = opts.normalize ?? ((n) => n);
  }

  setNormalizeFunc(fn: NormalizeFunc): void {
    this.normalizeFn = fn;
    const flags = [...this.formal.values()];
    this.formal.clear();
    for (const f of flags) this.formal.set(fn(f.name), f);
  }

  normalize(name: string): string { return this.normalizeFn(name); }

  // -- declaration ---------------------------------------------------------

  /** Adds an existing Flag (shared, as pflag's AddFlag). A flag already present is ignored. */
  addFlag(flag: Flag<any>): void {
    const n = this.normalizeFn(flag.name);
    if (this.formal.has(n)) {
      if (this.formal.get(n) === flag) return;
      throw new Error(`${this.name} flag redefined: ${flag.name}`);
    }
    if (flag.shorthand) {
      if (flag.shorthand.length !== 1) throw new Error(`${goQuote(flag.shorthand)} shorthand is more than one ASCII character`);
      const used = this.shorthands.get(flag.shorthand);
      if (used) throw new Error(`unable to redefine '${flag.shorthand}' shorthand in ${goQuote(this.name)} flagset: it's already used for ${goQuote(used.name)} flag`);
      this.shorthands.set(flag.shorthand, flag);
    }
    this.formal.set(n, flag);
    this.orderedFormal.push(flag);
  }

  /** Adds every flag of `other` that this set does not have yet. */
  addFlagSet(other: FlagSet): void {
    for (const f of other.orderedFormal) if (!this.formal.has(this.normalizeFn(f.name))) this.addFlag(f);
  }

  /** Declares a flag of a custom Value type (pflag's VarP). */
  var<T = string>(value: Value, name: string, usage: string, opts?: FlagOptions): Flag<T> {
    const f = new Flag<T>(name, value, usage, opts);
    this.addFlag(f);
    return f;
  }

  private def<T>(value: TypedValue<T>, name: string, usage: string, opts?: FlagOptions): Flag<T> {
    return this.var<T>(value, name, usage, opts);
  }

  bool(name: string, def: boolean, usage: string, opts?: FlagOptions): Flag<boolean> { return this.def(new BoolValue(holder(def)), name, usage, opts); }
  boolVar<O extends object>(o: O, k: KeysOfType<O, boolean>, name: string, usage: string, opts?: FlagOptions): Flag<boolean> {
    return this.def(new BoolValue(slotOf(o, k) as Slot<boolean>), name, usage, opts);
  }
  /** A Go `int` (64-bit) flag. */
  int(name: string, def: number, usage: string, opts?: FlagOptions): Flag<number> { return this.def(new IntValue(holder(def), 'int'), name, usage, opts); }
  intVar<O extends object>(o: O, k: KeysOfType<O, number>, name: string, usage: string, opts?: FlagOptions): Flag<number> {
    return this.def(new IntValue(slotOf(o, k) as Slot<number>, 'int'), name, usage, opts);
  }
  int32(name: string, def: number, usage: string, opts?: FlagOptions): Flag<number> { return this.def(new IntValue(holder(def), 'int32'), name, usage, opts); }
  int32Var<O extends object>(o: O, k: KeysOfType<O, number>, name: string, usage: string, opts?: FlagOptions): Flag<number> {
    return this.def(new IntValue(slotOf(o, k) as Slot<number>, 'int32'), name, usage, opts);
  }
  int64(name: string, def: number, usage: string, opts?: FlagOptions): Flag<number> { return this.def(new IntValue(holder(def), 'int64'), name, usage, opts); }
  int64Var<O extends object>(o: O, k: KeysOfType<O, number>, name: string, usage: string, opts?: FlagOptions): Flag<number> {
    return this.def(new IntValue(slotOf(o, k) as Slot<number>, 'int64'), name, usage, opts);
  }
  uint32Var<O extends object>(o: O, k: KeysOfType<O, number>, name: string, usage: string, opts?: FlagOptions): Flag<number> {
    return this.def(new IntValue(slotOf(o, k) as Slot<number>, 'uint32'), name, usage, opts);
  }
  float64(name: string, def: number, usage: string, opts?: FlagOptions): Flag<number> { return this.def(new Float64Value(holder(def)), name, usage, opts); }
  float64Var<O extends object>(o: O, k: KeysOfType<O, number>, name: string, usage: string, opts?: FlagOptions): Flag<number> {
    return this.def(new Float64Value(slotOf(o, k) as Slot<number>), name, usage, opts);
  }
  string(name: string, def: string, usage: string, opts?: FlagOptions): Flag<string> { return this.def(new StringValue(holder(def)), name, usage, opts); }
  stringVar<O extends object>(o: O, k: KeysOfType<O, string>, name: string, usage: string, opts?: FlagOptions): Flag<string> {
    return this.def(new StringValue(slotOf(o, k) as Slot<string>), name, usage, opts);
  }
  /** A string flag limited to `allowed` values. */
  enumVar<O extends object>(o: O, k: KeysOfType<O, string>, name: string, allowed: readonly string[], usage: string, opts?: FlagOptions): Flag<string> {
    return this.def(new EnumValue(slotOf(o, k) as Slot<string>, allowed), name, usage, opts);
  }
  /** pflag's StringSlice (help type `strings`): comma-separated (CSV), repeatable, appends. */
  strings(name: string, def: string[], usage: string, opts?: FlagOptions): Flag<string[]> { return this.def(new StringSliceValue(holder(def)), name, usage, opts); }
  stringsVar<O extends object>(o: O, k: KeysOfType<O, string[]>, name: string, usage: string, opts?: FlagOptions): Flag<string[]> {
    return this.def(new StringSliceValue(slotOf(o, k) as Slot<string[]>), name, usage, opts);
  }
  /** pflag's StringArray: one element per occurrence, no comma splitting. */
  stringArray(name: string, def: string[], usage: string, opts?: FlagOptions): Flag<string[]> { return this.def(new StringArrayValue(holder(def)), name, usage, opts); }
  stringArrayVar<O extends object>(o: O, k: KeysOfType<O, string[]>, name: string, usage: string, opts?: FlagOptions): Flag<string[]> {
    return this.def(new StringArrayValue(slotOf(o, k) as Slot<string[]>), name, usage, opts);
  }
  /** A Go duration flag; values are milliseconds. */
  duration(name: string, defMs: number, usage: string, opts?: FlagOptions): Flag<number> { return this.def(new DurationValue(holder(defMs)), name, usage, opts); }
  durationVar<O extends object>(o: O, k: KeysOfType<O, number>, name: string, usage: string, opts?: FlagOptions): Flag<number> {
    return this.def(new DurationValue(slotOf(o, k) as Slot<number>), name, usage, opts);
  }
  stringToString(name: string, def: Record<string, string>, usage: string, opts?: FlagOptions): Flag<Record<string, string>> {
    return this.def(new StringToStringValue(holder(def)), name, usage, opts);
  }
  stringToStringVar<O extends object>(o: O, k: KeysOfType<O, Record<string, string>>, name: string, usage: string, opts?: FlagOptions): Flag<Record<string, string>> {
    return this.def(new StringToStringValue(slotOf(o, k) as Slot<Record<string, string>>), name, usage, opts);
  }
  mapStringBool(name: string, def: Record<string, boolean>, usage: string, opts?: FlagOptions): Flag<Record<string, boolean>> {
    return this.def(new MapStringBoolValue(holder(def)), name, usage, opts);
  }
  mapStringBoolVar<O extends object>(o: O, k: KeysOfType<O, Record<string, boolean>>, name: string, usage: string, opts?: FlagOptions): Flag<Record<string, boolean>> {
    return this.def(new MapStringBoolValue(slotOf(o, k) as Slot<Record<string, boolean>>), name, usage, opts);
  }
  /** `key=value` pairs (component-base MapStringString); `sep: '<'` for eviction thresholds. */
  mapStringString(name: string, def: Record<string, string>, usage: string, opts?: FlagOptions & { sep?: '=' | '<'; noSplit?: boolean }): Flag<Record<string, string>> {
    return this.def(new MapStringStringValue(holder(def), opts?.sep, opts?.noSplit), name, usage, opts);
  }
  mapStringStringVar<O extends object>(o: O, k: KeysOfType<O, Record<string, string>>, name: string, usage: string, opts?: FlagOptions & { sep?: '=' | '<'; noSplit?: boolean }): Flag<Record<string, string>> {
    return this.def(new MapStringStringValue(slotOf(o, k) as Slot<Record<string, string>>, opts?.sep, opts?.noSplit), name, usage, opts);
  }
  colonSeparatedMultimap(name: string, def: Record<string, string[]>, usage: string, opts?: FlagOptions & { allowDefaultEmptyKey?: boolean }): Flag<Record<string, string[]>> {
    return this.def(new ColonSeparatedMultimapValue(holder(def), opts?.allowDefaultEmptyKey), name, usage, opts);
  }
  int32Slice(name: string, def: number[], usage: string, opts?: FlagOptions): Flag<number[]> { return this.def(new Int32SliceValue(holder(def)), name, usage, opts); }
  int32SliceVar<O extends object>(o: O, k: KeysOfType<O, number[]>, name: string, usage: string, opts?: FlagOptions): Flag<number[]> {
    return this.def(new Int32SliceValue(slotOf(o, k) as Slot<number[]>), name, usage, opts);
  }
  quantity(name: string, def: string, usage: string, opts?: FlagOptions): Flag<string> { return this.def(new QuantityValue(holder(def)), name, usage, opts); }
  quantityVar<O extends object>(o: O, k: KeysOfType<O, string>, name: string, usage: string, opts?: FlagOptions): Flag<string> {
    return this.def(new QuantityValue(slotOf(o, k) as Slot<string>), name, usage, opts);
  }
  ip(name: string, def: string, usage: string, opts?: FlagOptions): Flag<string> { return this.def(new IPValue(holder(def)), name, usage, opts); }
  ipVar<O extends object>(o: O, k: KeysOfType<O, string>, name: string, usage: string, opts?: FlagOptions): Flag<string> {
    return this.def(new IPValue(slotOf(o, k) as Slot<string>), name, usage, opts);
  }
  namedCertKeyVar<O extends object>(o: O, k: KeysOfType<O, NamedCertKey[]>, name: string, usage: string, opts?: FlagOptions): Flag<NamedCertKey[]> {
    return this.def(new NamedCertKeyArrayValue(slotOf(o, k) as Slot<NamedCertKey[]>), name, usage, opts);
  }
  /**
   * The `--version` flag of component-base's verflag: `--version`, `--version=raw`,
   * `--version=vX.Y.Z` (sets the reported version). Command prints and exits when it is set.
   */
  version(name = 'version', usage = '--version, --version=raw prints version information and quits; --version=vX.Y.Z... sets the reported version'): Flag<VersionFlagState> {
    return this.def(new VersionValue(holder<VersionFlagState>('false')), name, usage, { noOptDefVal: 'true' });
  }

  markDeprecated(name: string, message: string): void {
    const f = this.mustLookup(name);
    if (!message) throw new Error(`deprecated message for flag ${goQuote(name)} must be set`);
    f.deprecated = message;
    f.hidden = true;
  }
  markShorthandDeprecated(name: string, message: string): void {
    const f = this.mustLookup(name);
    if (!message) throw new Error(`deprecated message for flag ${goQuote(name)} must be set`);
    f.shorthandDeprecated = message;
  }
  markHidden(name: string): void { this.mustLookup(name).hidden = true; }

  private mustLookup(name: string): Flag<any> {
    const f = this.lookup(name);
    if (!f) throw new Error(`flag ${goQuote(name)} does not exist`);
    return f;
  }

  // -- queries -------------------------------------------------------------

  lookup<T = unknown>(name: string): Flag<T> | undefined { return this.formal.get(this.normalizeFn(name)); }
  shorthandLookup(c: string): Flag<any> | undefined { return this.shorthands.get(c); }
  /** Whether the flag was set on the command line (or with set()). */
  changed(name: string): boolean { return this.lookup(name)?.changed ?? false; }
  /** Names of the flags set explicitly, in declaration order. */
  changedNames(): string[] { return this.orderedFormal.filter((f) => f.changed).map((f) => f.name); }
  /** Positional arguments left after parsing. */
  args(): string[] { return [...this.positional]; }
  /** the flags of the command line, by long name, in the order given, with their values as given */
  givenFlags(): readonly { name: string; value: string }[] { return this.given; }
  /** How many positional arguments came before `--` (-1 if there was none). */
  argsLenAtDash(): number { return this.dashAt; }
  parsed(): boolean { return this.wasParsed; }
  hasFlags(): boolean { return this.formal.size > 0; }
  hasAvailableFlags(): boolean { return this.orderedFormal.some((f) => !f.hidden); }

  /** Every flag, sorted by name unless sortFlags is false (pflag's VisitAll). */
  all(): Flag<any>[] {
    if (!this.sortFlags) return [...this.orderedFormal];
    return [...this.formal.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, f]) => f);
  }
  visitAll(fn: (f: Flag<any>) => void): void { for (const f of this.all()) fn(f); }
  /** Visits only the flags that were set (pflag's Visit). */
  visit(fn: (f: Flag<any>) => void): void { for (const f of this.all()) if (f.changed) fn(f); }

  // -- setting and parsing -------------------------------------------------

  /** Sets a flag by name as if given on the command line (pflag's Set). */
  set(name: string, value: string): void {
    const flag = this.lookup(name);
    if (!flag) throw new NotExistError(`no such flag -${name}`);
    try {
      flag.value.set(value);
    } catch (e) {
      const flagName = flag.shorthand && !flag.shorthandDeprecated ? `-${flag.shorthand}, --${flag.name}` : `--${flag.name}`;
      const cause = e instanceof Error ? e : new Error(String(e));
      throw new InvalidValueError(`invalid argument ${goQuote(value)} for ${goQuote(flagName)} flag: ${cause.message}`, flag, value, cause);
    }
    flag.changed = true;
    if (flag.deprecated) this.output.write(`Flag --${flag.name} has been deprecated, ${flag.deprecated}\n`);
  }

  /**
   * Parses arguments (without the program name). Throws FlagError subclasses with pflag's
   * messages, and HelpRequested for an undefined -h/--help.
   */
  parse(args: readonly string[]): void {
    this.wasParsed = true;
    this.positional = [];
    this.given = [];
    this.dashAt = -1;
    let rest = [...args];
    while (rest.length > 0) {
      const s = rest.shift()!;
      if (s.length === 0 || s[0] !== '-' || s.length === 1) {
        if (!this.interspersed) {
          this.positional.push(s, ...rest);
          return;
        }
        this.positional.push(s);
        continue;
      }
      if (s[1] === '-') {
        if (s.length === 2) {
          this.dashAt = this.positional.length;
          this.positional.push(...rest);
          return;
        }
        rest = this.parseLongArg(s, rest);
      } else {
        rest = this.parseShortArg(s, rest);
      }
    }
  }

  private parseLongArg(s: string, args: string[]): string[] {
    let name = s.slice(2);
    if (name.length === 0 || name[0] === '-' || name[0] === '=') throw new InvalidSyntaxError(`bad flag syntax: ${s}`);
    const eq = name.indexOf('=');
    const hasValue = eq >= 0;
    const inline = hasValue ? name.slice(eq + 1) : '';
    if (hasValue) name = name.slice(0, eq);
    const flag = this.lookup(name);
    if (!flag) {
      if (name === 'help') throw new HelpRequested();
      throw new NotExistError(`unknown flag: --${name}`);
    }
    let value: string;
    if (hasValue) value = inline;
    else if (flag.noOptDefVal !== '') value = flag.noOptDefVal;
    else if (args.length > 0) value = args.shift()!;
    else throw new ValueRequiredError(`flag needs an argument: --${name}`);
    this.set(flag.name, value);
    this.given.push({ name: flag.name, value });
    return args;
  }

  private parseShortArg(s: string, args: string[]): string[] {
    let shorthands = s.slice(1);
    while (shorthands.length > 0) {
      const c = shorthands[0]!;
      const flag = this.shorthands.get(c);
      if (!flag) {
        if (c === 'h') throw new HelpRequested();
        throw new NotExistError(`unknown shorthand flag: '${c}' in -${shorthands}`);
      }
      let value: string;
      if (shorthands.length > 2 && shorthands[1] === '=') {
        value = shorthands.slice(2);
        shorthands = '';
      } else if (flag.noOptDefVal !== '') {
        value = flag.noOptDefVal;
        shorthands = shorthands.slice(1);
      } else if (shorthands.length > 1) {
        value = shorthands.slice(1);
        shorthands = '';
      } else if (args.length > 0) {
        value = args.shift()!;
        shorthands = '';
      } else {
        throw new ValueRequiredError(`flag needs an argument: '${c}' in -${shorthands}`);
      }
      if (flag.shorthandDeprecated) this.output.write(`Flag shorthand -${flag.shorthand} has been deprecated, ${flag.shorthandDeprecated}\n`);
      this.set(flag.name, value);
      this.given.push({ name: flag.name, value });
    }
    return args;
  }

  // -- usage ---------------------------------------------------------------

  /** pflag's FlagUsagesWrapped: aligned flag lines; `cols` 0 means no wrapping. */
  flagUsages(cols = 0): string {
    return flagUsagesWrapped(this.all(), cols);
  }
}

/** pflag's UnquoteUsage: a back-quoted word in the usage names the argument, else the type does. */
export function unquoteUsage(flag: Flag<any>): [string, string] {
  const usage = flag.usage;
  const i = usage.indexOf('`');
  if (i >= 0) {
    const j = usage.indexOf('`', i + 1);
    if (j >= 0) {
      const name = usage.slice(i + 1, j);
      return [name, usage.slice(0, i) + name + usage.slice(j + 1)];
    }
  }
  let name = flag.value.type();
  switch (name) {
    case 'bool': name = ''; break;
    case 'float64': name = 'float'; break;
    case 'int64': name = 'int'; break;
    case 'uint64': name = 'uint'; break;
    case 'stringSlice': name = 'strings'; break;
    case 'intSlice': name = 'ints'; break;
    case 'uintSlice': name = 'uints'; break;
    case 'boolSlice': name = 'bools'; break;
  }
  return [name, usage];
}

function wrapN(i: number, slop: number, s: string): [string, string] {
  if (i + slop > s.length) return [s, ''];
  const head = s.slice(0, i);
  const w = Math.max(head.lastIndexOf(' '), head.lastIndexOf('\t'), head.lastIndexOf('\n'));
  if (w <= 0) return [s, ''];
  const nl = head.lastIndexOf('\n');
  if (nl > 0 && nl < w) return [s.slice(0, nl), s.slice(nl + 1)];
  return [s.slice(0, w), s.slice(w + 1)];
}

/** pflag's wrap: indents continuation lines by `i` and wraps at width `w` (0: no wrapping). */
export function wrapUsage(i: number, w: number, s: string): string {
  if (w === 0) return s.split('\n').join('\n' + ' '.repeat(i));
  let width = w - i;
  let r = '';
  if (width < 24) {
    i = 16;
    width = w - i;
    r += '\n' + ' '.repeat(i);
  }
  if (width < 24) return s.split('\n').join(r);
  const slop = 5;
  width -= slop;
  let l: string;
  [l, s] = wrapN(width, slop, s);
  r += l.split('\n').join('\n' + ' '.repeat(i));
  while (s !== '') {
    let t: string;
    [t, s] = wrapN(width, slop, s);
    r += '\n' + ' '.repeat(i) + t.split('\n').join('\n' + ' '.repeat(i));
  }
  return r;
}

/** Formats flags as pflag's FlagUsagesWrapped does. */
export function flagUsagesWrapped(flags: readonly Flag<any>[], cols = 0): string {
  const lines: string[] = [];
  let maxlen = 0;
  for (const flag of flags) {
    if (flag.hidden) continue;
    let line = flag.shorthand && !flag.shorthandDeprecated ? `  -${flag.shorthand}, --${flag.name}` : `      --${flag.name}`;
    const [varname, usage] = unquoteUsage(flag);
    if (varname) line += ' ' + varname;
    if (flag.noOptDefVal) {
      switch (flag.value.type()) {
        case 'string': line += `[="${flag.noOptDefVal}"]`; break;
        case 'bool': if (flag.noOptDefVal !== 'true') line += `[=${flag.noOptDefVal}]`; break;
        case 'count': if (flag.noOptDefVal !== '+1') line += `[=${flag.noOptDefVal}]`; break;
        default: line += `[=${flag.noOptDefVal}]`;
      }
    }
    line += '\x00';
    if (line.length > maxlen) maxlen = line.length;
    line += usage;
    if (!flag.defaultIsZeroValue()) {
      line += flag.value.type() === 'string' ? ` (default ${goQuote(flag.defValue)})` : ` (default ${flag.defValue})`;
    }
    if (flag.deprecated) line += ` (DEPRECATED: ${flag.deprecated})`;
    lines.push(line);
  }
  let out = '';
  for (const line of lines) {
    const sidx = line.indexOf('\x00');
    const spacing = ' '.repeat(maxlen - sidx);
    out += line.slice(0, sidx) + ' ' + spacing + ' ' + wrapUsage(maxlen + 2, cols, line.slice(sidx + 1)) + '\n';
  }
  return out;
}

// ─────────────────────────────────────────────────────────────────────────────
// Named flag sets (help sections)
// ─────────────────────────────────────────────────────────────────────────────

/** component-base's NamedFlagSets: flag sets printed as "<Name> flags:" sections, in order. */
export class NamedFlagSets {
  readonly order: string[] = [];
  readonly sets = new Map<string, FlagSet>();
  constructor(private readonly normalize: NormalizeFunc = wordSepNormalize) {}

  /** The section named `name`, created on first use. */
  flagSet(name: string): FlagSet {
    let fs = this.sets.get(name);
    if (!fs) {
      fs = new FlagSet(name, { normalize: this.normalize });
      this.sets.set(name, fs);
      this.order.push(name);
    }
    return fs;
  }

  /** One FlagSet holding every section's flags (the set a command parses). */
  merged(name = ''): FlagSet {
    const all = new FlagSet(name, { normalize: this.normalize });
    for (const n of this.order) all.addFlagSet(this.sets.get(n)!);
    return all;
  }
}

/** component-base's PrintSections. With `cols` > 24 usage goes on its own wrapped line, as on a terminal. */
export function printSections(out: Writer, fss: NamedFlagSets, cols = 0): void {
  for (const name of fss.order) {
    const fs = fss.sets.get(name)!;
    if (!fs.hasFlags()) continue;
    const flags = fs.all();
    let zzz = '';
    if (cols > 24) {
      zzz = 'z'.repeat(cols - 24);
      flags.push(new Flag(zzz, new IntValue(holder(0)), zzz));
    }
    const title = name.slice(0, 1).toUpperCase() + name.slice(1);
    const buf = `\n${title} flags:\n\n${flagUsagesWrapped(flags, cols)}`;
    if (cols > 24) {
      const i = buf.indexOf(zzz);
      const lines = buf.slice(0, i).split('\n');
      out.write(lines.slice(0, -1).join('\n') + '\n');
    } else {
      out.write(buf);
    }
  }
}

/** The terminal width kube daemons use for help: stdout's columns if it is a terminal, else 0. */
export function terminalColumns(stream: { isTTY?: boolean; columns?: number } = process.stdout): number {
  return stream.isTTY && stream.columns ? stream.columns : 0;
}

// ─────────────────────────────────────────────────────────────────────────────
// Feature gates
// ─────────────────────────────────────────────────────────────────────────────

export type FeatureStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

export interface FeatureSpec {
  default: boolean;
  preRelease: FeatureStage;
  /** The gate cannot be set to anything but its default. */
  lockToDefault?: boolean;
}

const ALL_ALPHA = 'AllAlpha';
const ALL_BETA = 'AllBeta';

/** Aggregates errors the way apimachinery's utilerrors.NewAggregate prints them. */
function aggregateMessage(msgs: string[]): string {
  return msgs.length === 1 ? msgs[0]! : '[' + msgs.join(', ') + ']';
}

/**
 * A registry of known feature gates and their state (component-base's featuregate). It is also
 * a flag Value of type mapStringBool for `--feature-gates A=true,B=false`.
 */
export class FeatureGate implements TypedValue<Record<string, boolean>> {
  private readonly known = new Map<string, FeatureSpec>();
  private enabledMap: Record<string, boolean> = {};
  private raw: Record<string, boolean> = {};
  private closed = false;
  private readonly fromFlag = new Set<string>();
  /** Called for informational warnings (setting a GA or deprecated gate). klog.ts wires this to the log. */
  onWarning: (msg: string, kv: Record<string, unknown>) => void = () => {};

  constructor(specs: Record<string, FeatureSpec> = {}) {
    this.known.set(ALL_ALPHA, { default: false, preRelease: 'ALPHA' });
    this.known.set(ALL_BETA, { default: false, preRelease: 'BETA' });
    this.add(specs);
  }

  /** Registers gates. Re-registering with an identical spec is allowed. */
  add(specs: Record<string, FeatureSpec>): void {
    if (this.closed) throw new Error('cannot add a feature gate after adding it to the flag set');
    for (const [name, spec] of Object.entries(specs)) {
      const existing = this.known.get(name);
      if (existing) {
        if (existing.default === spec.default && existing.preRelease === spec.preRelease && !!existing.lockToDefault === !!spec.lockToDefault) continue;
        throw new Error(`feature gate ${name} with different spec already exists: ${JSON.stringify(existing)}`);
      }
      this.known.set(name, { ...spec });
    }
  }

  /** Parses `A=true,B=false` (the flag form). */
  set(value: string): void {
    const m: Record<string, boolean> = {};
    for (const s of value.split(',')) {
      if (s.length === 0) continue;
      const eq = s.indexOf('=');
      const k = (eq < 0 ? s : s.slice(0, eq)).trim();
      if (eq < 0) throw new Error(`missing bool value for ${k}`);
      const v = s.slice(eq + 1).trim();
      let b: boolean;
      try { b = parseGoBool(v); } catch (e) { throw new Error(`invalid value of ${k}=${v}, err: ${(e as Error).message}`); }
      m[k] = b;
    }
    this.setFromMap(m);
    for (const k of Object.keys(m)) this.fromFlag.add(k);
  }

  /** Sets several gates at once. */
  setFromMap(m: Record<string, boolean>): void {
    const raw = { ...this.raw, ...m };
    const r = this.compute(raw, new Set(Object.keys(m)));
    // raw is kept even on failure, so validate() reports the same problem, as component-base does.
    this.raw = raw;
    if (r.errs.length > 0) throw new Error(aggregateMessage(r.errs));
    this.enabledMap = r.enabled;
    for (const [msg, kv] of r.warnings) this.onWarning(msg, kv);
  }

  /**
   * Applies a config file's featureGates map underneath the command line: gates already given
   * with --feature-gates keep their flag value (kubelet's rule).
   */
  setFromConfig(m: Record<string, boolean>): void {
    const rest: Record<string, boolean> = {};
    for (const [k, v] of Object.entries(m)) if (!this.fromFlag.has(k)) rest[k] = v;
    this.setFromMap(rest);
  }

  private compute(raw: Record<string, boolean>, fresh: Set<string>) {
    const enabled: Record<string, boolean> = {};
    const errs: string[] = [];
    const warnings: [string, Record<string, unknown>][] = [];
    for (const [k, v] of Object.entries(raw)) {
      const spec = this.known.get(k);
      if (!spec) { errs.push(`unrecognized feature gate: ${k}`); break; }
      if (spec.lockToDefault && spec.default !== v) {
        errs.push(`cannot set feature gate ${k} to ${v}, feature is locked to ${spec.default}`);
        continue;
      }
      if (k === ALL_ALPHA || k === ALL_BETA) {
        const stage = k === ALL_ALPHA ? 'ALPHA' : 'BETA';
        for (const [name, s] of this.known) {
          if (name === ALL_ALPHA || name === ALL_BETA || s.preRelease !== stage) continue;
          if (!(name in raw)) enabled[name] = v;
        }
        enabled[k] = v;
        continue;
      }
      enabled[k] = v;
      if (fresh.has(k)) {
        if (spec.preRelease === 'DEPRECATED') warnings.push(['Warning: setting deprecated feature gate. It will be removed in a future release.', { featureGate: k, value: v }]);
        else if (spec.preRelease === 'GA') warnings.push(['Warning: setting GA feature gate. It will be removed in a future release.', { featureGate: k, value: v }]);
      }
    }
    return { enabled, errs, warnings };
  }

  /** Whether a gate is on. Unknown gates throw, as component-base panics. */
  enabled(name: string): boolean {
    const v = this.enabledMap[name];
    if (v !== undefined) return v;
    const spec = this.known.get(name);
    if (!spec) throw new Error(`feature ${goQuote(name)} is not registered in FeatureGate`);
    return spec.default;
  }

  /** Whether the gate was given explicitly (flag or config). */
  explicitlySet(name: string): boolean { return name in this.raw; }

  /** Known gates and their specs, without AllAlpha/AllBeta. */
  getAll(): Record<string, FeatureSpec> {
    const out: Record<string, FeatureSpec> = {};
    for (const [k, v] of this.known) if (k !== ALL_ALPHA && k !== ALL_BETA) out[k] = { ...v };
    return out;
  }

  /** Help lines `Name=true|false (BETA - default=true)`, sorted; GA and deprecated gates are not listed. */
  knownFeatures(): string[] {
    const out: string[] = [];
    for (const [k, spec] of this.known) {
      if (spec.preRelease === 'GA' || spec.preRelease === 'DEPRECATED') continue;
      out.push(`${k}=true|false (${spec.preRelease} - default=${spec.default})`);
    }
    return out.sort();
  }

  /** Checks the raw settings again (component-base's Validate); returns error messages. */
  validate(): string[] {
    return this.compute(this.raw, new Set()).errs;
  }

  /** The current state of every known gate. */
  get(): Record<string, boolean> {
    const out: Record<string, boolean> = {};
    for (const k of this.known.keys()) if (k !== ALL_ALPHA && k !== ALL_BETA) out[k] = this.enabled(k);
    return out;
  }
  replace(v: Record<string, boolean>): void { this.raw = {}; this.enabledMap = {}; this.setFromMap(v); }
  fromConfig(raw: unknown): Record<string, boolean> { return mapFromConfig(raw, 'a map of booleans', isBool); }
  toString(): string {
    return Object.entries(this.enabledMap).map(([k, v]) => `${k}=${v}`).sort().join(',');
  }
  type(): string { return 'mapStringBool'; }

  /**
   * Adds `--feature-gates` to `fs`. With `component` set, the flag takes Kubernetes 1.33's
   * `component:key=value` form (type colonSeparatedMultimapStringString, `kube` by default).
   */
  addFlag(fs: FlagSet, opts: { component?: string; name?: string } = {}): Flag<any> {
    this.closed = true;
    const name = opts.name ?? 'feature-gates';
    if (!opts.component) {
      return fs.var(this, name, 'A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:\n' + this.knownFeatures().join('\n'));
    }
    const component = opts.component;
    const store = holder<Record<string, string[]>>({});
    const inner = new ColonSeparatedMultimapValue(store, true);
    const gate = this;
    const value: Value = {
      set(s: string) {
        const before = store.get();
        inner.set(s);
        const after = store.get();
        const added: Record<string, string[]> = {};
        for (const [k, vs] of Object.entries(after)) {
          const prev = before[k]?.length ?? 0;
          if (vs.length > prev) added[k] = vs.slice(prev);
        }
        for (const [k, vs] of Object.entries(added)) {
          const comp = k === '' ? component : k;
          if (comp !== component) throw new Error(`component not registered: ${comp}`);
          gate.set(vs.join(','));
        }
      },
      toString: () => inner.toString(),
      type: () => inner.type(),
    };
    return fs.var(value, name,
      'Comma-separated list of component:key=value pairs that describe feature gates for alpha/experimental features of different components.\n' +
      `If the component is not specified, defaults to "${component}". This flag can be repeatedly invoked. For example: --feature-gates 'wardle:featureA=true,wardle:featureB=false' --feature-gates '${component}:featureC=true'` +
      'Options are:\n' + this.knownFeatures().map((l) => `${component}:${l}`).join('\n'));
  }
}

// ─────────────────────────────────────────────────────────────────────────────
// Config files
// ─────────────────────────────────────────────────────────────────────────────

export interface ConfigFileOptions {
  /** Expected `kind`; a file with another kind is rejected. */
  kind?: string;
  /** Accepted `apiVersion`s. */
  apiVersions?: string[];
  /** What to do with a field the target object does not have: reject (default) or ignore. */
  unknownFields?: 'error' | 'ignore';
  /**
   * Dotted paths of fields that are maps (replaced as a whole, any keys allowed) rather than
   * structs. Fields whose default is an empty object are treated as maps without being listed.
   */
  maps?: string[];
  /** Converts a raw value for a field no flag is bound to (dotted path); return undefined to keep it raw. */
  convert?: (path: string, raw: unknown, current: unknown) => unknown;
}

export class ConfigFileError extends Error {
  override name = 'ConfigFileError';
}

function bindingIndex(fs: FlagSet): Map<object, Map<PropertyKey, Flag<any>>> {
  const idx = new Map<object, Map<PropertyKey, Flag<any>>>();
  for (const f of fs.all()) {
    const slot = (f.value as unknown as { slot?: Slot<unknown> }).slot;
    if (!slot?.target) continue;
    let m = idx.get(slot.target);
    if (!m) idx.set(slot.target, (m = new Map()));
    m.set(slot.key!, f);
  }
  return idx;
}

/**
 * Applies a parsed config document to `target`: config values replace defaults, while flags the
 * user set explicitly keep their values (for map flags the keys merge, flag keys winning), as
 * the Kubernetes daemons do with `--config`. Values of fields bound to a flag are converted by
 * that flag's type (durations from "5m0s", quantities, ...).
 */
export function applyConfig<T extends object>(doc: unknown, target: T, fs: FlagSet, opts: ConfigFileOptions = {}, source = 'config'): T {
  if (doc === null || doc === undefined) return target;
  if (!isPlainObject(doc)) throw new ConfigFileError(`${source}: expected a mapping at the top level`);
  const { apiVersion, kind, ...fields } = doc as Record<string, unknown>;
  if (opts.kind && kind !== undefined && kind !== opts.kind) throw new ConfigFileError(`${source}: wrong kind ${goQuote(String(kind))}, expected ${goQuote(opts.kind)}`);
  if (opts.apiVersions && apiVersion !== undefined && !opts.apiVersions.includes(String(apiVersion))) {
    throw new ConfigFileError(`${source}: no kind ${goQuote(String(kind ?? opts.kind ?? ''))} is registered for version ${goQuote(String(apiVersion))}`);
  }
  const idx = bindingIndex(fs);
  // Snapshot explicitly set flags before the file overwrites their fields.
  const pinned: [Flag<any>, unknown][] = [];
  for (const f of fs.all()) if (f.changed) pinned.push([f, f.get()]);

  const merge = (obj: Record<PropertyKey, unknown>, data: Record<string, unknown>, path: string) => {
    for (const [k, raw] of Object.entries(data)) {
      const p = path ? `${path}.${k}` : k;
      const flag = idx.get(obj)?.get(k);
      if (flag) {
        const tv = flag.value as Partial<TypedValue<unknown>>;
        try {
          const v = tv.fromConfig ? tv.fromConfig(raw) : raw;
          if (tv.replace) tv.replace(v);
          else obj[k] = v;
        } catch (e) {
          throw new ConfigFileError(`${source}: field ${goQuote(p)}: ${(e as Error).message}`);
        }
        continue;
      }
      if (!(k in obj)) {
        if ((opts.unknownFields ?? 'error') === 'error') throw new ConfigFileError(`${source}: strict decoding error: unknown field ${goQuote(p)}`);
        continue;
      }
      const cur = obj[k];
      const conv = opts.convert?.(p, raw, cur);
      if (conv !== undefined) { obj[k] = conv; continue; }
      // A nested object with fields is a struct (merged, strictly); an empty one, or a path
      // listed in `maps`, is a map and is replaced as a whole.
      if (isPlainObject(cur) && isPlainObject(raw) && Object.keys(cur).length > 0 && !opts.maps?.includes(p)) {
        merge(cur as Record<PropertyKey, unknown>, raw, p);
        continue;
      }
      obj[k] = raw;
    }
  };
  merge(target as Record<PropertyKey, unknown>, fields, '');

  // Flags win.
  for (const [f, v] of pinned) {
    const tv = f.value as Partial<TypedValue<unknown>>;
    if (!tv.replace) continue;
    const now = tv.get?.();
    tv.replace(tv.mergeOverConfig && now !== undefined && now !== v ? tv.mergeOverConfig(now, v) : v);
  }
  return target;
}

/** Reads a YAML or JSON config file into `target` with applyConfig's rules. */
export function loadConfigFile<T extends object>(path: string, target: T, fs: FlagSet, opts: ConfigFileOptions = {}): T {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new ConfigFileError(`failed to read config file ${goQuote(path)}, error: ${err.code === 'ENOENT' ? `open ${path}: no such file or directory` : err.message}`);
  }
  let doc: unknown;
  try {
    doc = yaml().parse(text);
  } catch (e) {
    throw new ConfigFileError(`failed to decode config file ${goQuote(path)}: ${(e as Error).message}`);
  }
  return applyConfig(doc, target, fs, opts, `config file ${goQuote(path)}`);
}

// ─────────────────────────────────────────────────────────────────────────────
// Command (a small cobra)
// ─────────────────────────────────────────────────────────────────────────────

export interface CommandIO {
  stdout: Writer;
  stderr: Writer;
}

export interface CommandSpec {
  /** First word is the command name: "kube-controller-manager", "server [flags]". */
  use: string;
  short?: string;
  long?: string;
  example?: string;
  aliases?: string[];
  hidden?: boolean;
  /**
   * Positional argument policy: 'none' rejects arguments as the Kubernetes daemons do
   * (`"x" does not take any arguments, got ["a"]`); 'any' accepts them; or a custom check.
   */
  args?: 'none' | 'any' | ((args: string[]) => void);
  /**
   * cobra's SilenceUsage, as kube-apiserver sets it: a flag error prints `Error: ...` alone, not
   * the usage first (component-base's cli.Run prints usage for flag errors of commands without it)
   */
  silenceUsage?: boolean;
  /** The work. Throwing (or rejecting) makes execute() print `Error: <message>` and return 1. */
  run?: (ctx: { cmd: Command; args: string[]; flags: FlagSet }) => void | number | Promise<void | number>;
  /** Runs before run (after flag parsing) for this command and its subcommands. */
  persistentPreRun?: (ctx: { cmd: Command; args: string[]; flags: FlagSet }) => void | Promise<void>;
}

/**
 * A cobra-like command. Flags go into named sections (`cmd.sections.flagSet('generic')`), which
 * Kubernetes-style help prints as "Generic flags:" etc., or into `cmd.localFlags` (cobra's plain
 * "Flags:" block). `persistentFlags` are inherited by subcommands.
 */
export class Command {
  readonly spec: CommandSpec;
  readonly sections = new NamedFlagSets();
  readonly localFlags = new FlagSet('', { normalize: wordSepNormalize });
  readonly persistentFlags = new FlagSet('', { normalize: wordSepNormalize });
  readonly commands: Command[] = [];
  parent: Command | undefined;
  /** The flags parsed by the last execute() on this command. */
  flags: FlagSet | undefined;

  constructor(spec: CommandSpec) {
    this.spec = spec;
  }

  get name(): string { return this.spec.use.split(' ')[0]!; }

  addCommand(...cmds: Command[]): this {
    for (const c of cmds) { c.parent = this; this.commands.push(c); }
    return this;
  }

  commandPath(): string { return this.parent ? `${this.parent.commandPath()} ${this.name}` : this.name; }

  /** cobra's UseLine. */
  useLine(): string {
    const use = this.parent ? `${this.parent.commandPath()} ${this.spec.use}` : this.spec.use;
    const hasFlags = this.allFlags().hasAvailableFlags() || this.sections.order.length > 0;
    return hasFlags && !use.includes('[flags]') ? `${use} [flags]` : use;
  }

  private inheritedFlags(): FlagSet {
    const fs = new FlagSet('', { normalize: wordSepNormalize });
    for (let p = this.parent; p; p = p.parent) fs.addFlagSet(p.persistentFlags);
    return fs;
  }

  /** Every flag the command accepts: sections, local, persistent and inherited persistent flags. */
  allFlags(): FlagSet {
    const fs = this.sections.merged(this.name);
    fs.addFlagSet(this.localFlags);
    fs.addFlagSet(this.persistentFlags);
    fs.addFlagSet(this.inheritedFlags());
    return fs;
  }

  private runnable(): boolean { return !!this.spec.run; }
  /** Visible subcommands, sorted by name as cobra sorts them. */
  private availableCommands(): Command[] {
    return this.commands.filter((c) => !c.spec.hidden).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Usage text: Kubernetes style when the command has flag sections, else cobra's template. */
  usageString(cols = 0): string {
    let out = '';
    const w: Writer = { write: (s: string) => { out += s; } };
    if (this.sections.order.length > 0) {
      w.write(`Usage:\n  ${this.useLine()}\n`);
      printSections(w, this.sectionsForHelp(), cols);
      return out;
    }
    w.write('Usage:');
    if (this.runnable()) w.write(`\n  ${this.useLine()}`);
    const subs = this.availableCommands();
    if (subs.length > 0) w.write(`\n  ${this.commandPath()} [command]`);
    if (this.spec.aliases?.length) w.write(`\n\nAliases:\n  ${[this.name, ...this.spec.aliases].join(', ')}`);
    if (this.spec.example) w.write(`\n\nExamples:\n${this.spec.example}`);
    if (subs.length > 0) {
      const pad = Math.max(11, ...subs.map((c) => c.name.length));
      w.write('\n\nAvailable Commands:');
      for (const c of subs) w.write(`\n  ${c.name.padEnd(pad)} ${c.spec.short ?? ''}`);
    }
    const local = new FlagSet('', { normalize: wordSepNormalize });
    local.addFlagSet(this.localFlags);
    local.addFlagSet(this.persistentFlags);
    this.ensureHelpFlag(local);
    if (local.hasAvailableFlags()) w.write('\n\nFlags:\n' + local.flagUsages().trimEnd());
    const inherited = this.inheritedFlags();
    if (inherited.hasAvailableFlags()) w.write('\n\nGlobal Flags:\n' + inherited.flagUsages().trimEnd());
    if (subs.length > 0) w.write(`\n\nUse "${this.commandPath()} [command] --help" for more information about a command.`);
    w.write('\n');
    return out;
  }

  private sectionsForHelp(): NamedFlagSets {
    // Plain local and inherited flags are shown too, after the sections, so nothing is hidden.
    const extra = new FlagSet('', { normalize: wordSepNormalize });
    extra.addFlagSet(this.localFlags);
    extra.addFlagSet(this.persistentFlags);
    extra.addFlagSet(this.inheritedFlags());
    const inSections = this.sections.merged();
    const leftover = extra.all().filter((f) => !inSections.lookup(f.name));
    if (leftover.length === 0) return this.sections;
    const copy = new NamedFlagSets();
    for (const n of this.sections.order) copy.flagSet(n).addFlagSet(this.sections.sets.get(n)!);
    const other = copy.flagSet('other');
    for (const f of leftover) other.addFlag(f);
    return copy;
  }

  /** Help text: the long description, a blank line, then the usage. */
  helpString(cols = 0): string {
    const desc = (this.spec.long || this.spec.short || '').trimEnd();
    if (this.sections.order.length > 0) return `${desc}\n\n${this.usageString(cols)}`;
    return (desc ? desc + '\n\n' : '') + this.usageString(cols);
  }

  private ensureHelpFlag(fs: FlagSet): void {
    if (!fs.lookup('help')) {
      fs.var(new BoolValue(holder(false)), 'help', `help for ${this.name}`, { shorthand: fs.shorthandLookup('h') ? undefined : 'h' });
    }
  }

  /** Finds the subcommand named by the leading non-flag arguments (cobra's Find). */
  find(args: readonly string[]): [Command, string[]] {
    let cmd: Command = this;
    let rest = [...args];
    for (;;) {
      const flags = cmd.allFlags();
      let idx = -1;
      for (let i = 0; i < rest.length; i++) {
        const a = rest[i]!;
        if (a === '--') break;
        if (a.startsWith('--')) {
          if (!a.includes('=')) {
            const f = flags.lookup(a.slice(2));
            if (f && !f.noOptDefVal) i++;
          }
          continue;
        }
        if (a.startsWith('-') && a.length > 1) {
          if (a.length === 2) {
            const f = flags.shorthandLookup(a[1]!);
            if (f && !f.noOptDefVal) i++;
          }
          continue;
        }
        idx = i;
        break;
      }
      if (idx < 0) return [cmd, rest];
      const word = rest[idx]!;
      const sub = cmd.commands.find((c) => c.name === word || c.spec.aliases?.includes(word));
      if (!sub) return [cmd, rest];
      rest = [...rest.slice(0, idx), ...rest.slice(idx + 1)];
      cmd = sub;
    }
  }

  /**
   * Runs the command line (without the program name) and returns the exit code; never calls
   * process.exit. Help goes to stdout (exit 0); flag errors print usage then `Error: ...` to
   * stderr (exit 1), as component-base's cli.Run does.
   */
  async execute(argv: readonly string[] = process.argv.slice(2), io: CommandIO = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
    const [cmd, args] = this.find(argv);
    const fs = cmd.allFlags();
    fs.output = io.stderr;
    cmd.ensureHelpFlag(fs);
    cmd.flags = fs;
    const cols = terminalColumns(io.stdout as { isTTY?: boolean; columns?: number });
    try {
      fs.parse(args);
    } catch (e) {
      if (e instanceof HelpRequested) {
        io.stdout.write(cmd.helpString(cols));
        return 0;
      }
      if (cmd.spec.silenceUsage) {
        io.stderr.write(`Error: ${(e as Error).message}\n`);
      } else if (cmd.sections.order.length > 0) {
        io.stderr.write(cmd.usageString(terminalColumns(io.stderr as { isTTY?: boolean; columns?: number })) + '\n');
        io.stderr.write(`Error: ${(e as Error).message}\n`);
      } else {
        io.stderr.write(`Error: ${(e as Error).message}\n`);
        io.stderr.write(cmd.usageString() + '\n');
      }
      return 1;
    }
    if (fs.lookup('help')?.get() === true) {
      io.stdout.write(cmd.helpString(cols));
      return 0;
    }
    const positional = fs.args();
    if (!cmd.runnable()) {
      if (positional.length > 0 && cmd.commands.length > 0) {
        const word = positional[0]!;
        const suggestions = cmd.commands.filter((c) => levenshtein(c.name, word) <= 2 || c.name.startsWith(word)).map((c) => c.name);
        const hint = suggestions.length ? '\n\nDid you mean this?\n' + suggestions.map((s) => `\t${s}\n`).join('') : '';
        io.stderr.write(`Error: unknown command ${goQuote(word)} for ${goQuote(cmd.commandPath())}${hint}\nRun '${cmd.commandPath()} --help' for usage.\n`);
        return 1;
      }
      io.stdout.write(cmd.helpString(cols));
      return 0;
    }
    const ver = fs.lookup<VersionFlagState>('version');
    if (ver && ver.value instanceof VersionValue) {
      const state = ver.get();
      if (state === 'raw') { io.stdout.write(formatVersionRaw(getVersionInfo()) + '\n'); return 0; }
      if (state === 'true') { io.stdout.write(formatVersionLine() + '\n'); return 0; }
    }
    try {
      const policy = cmd.spec.args ?? 'none';
      if (policy === 'none') {
        if (positional.some((a) => a.length > 0)) throw new Error(`${goQuote(cmd.commandPath())} does not take any arguments, got ${goQuoteList(positional)}`);
      } else if (typeof policy === 'function') policy(positional);
      for (let c: Command | undefined = cmd; c; c = c.parent) {
        if (c.spec.persistentPreRun) { await c.spec.persistentPreRun({ cmd, args: positional, flags: fs }); break; }
      }
      const code = await cmd.spec.run!({ cmd, args: positional, flags: fs });
      return typeof code === 'number' ? code : 0;
    } catch (e) {
      io.stderr.write(`Error: ${e instanceof Error ? e.message : String(e)}\n`);
      return 1;
    }
  }
}

function levenshtein(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
  }
  return d[a.length]![b.length]!;
}

/** Runs a command and exits the process with its code (for bin entry points). */
export async function runMain(cmd: Command, argv: readonly string[] = process.argv.slice(2)): Promise<never> {
  const code = await cmd.execute(argv);
  process.exit(code);
}
