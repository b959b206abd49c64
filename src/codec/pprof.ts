// The pprof profile format (perftools.profiles.Profile, google/pprof's proto/profile.proto), as
// Go's runtime/pprof writes it: a protobuf message, gzip-compressed. Keelson writes its own
// profiles in it (/debug/pprof/profile and /heap, `keelson patch --profile`), so that `go tool
// pprof` and every tool that reads Go's profiles reads Keelson's.
//
// The schema is declared once below, with profile.proto's field numbers, and protobufjs encodes
// and decodes it (decoding serves the tests and tools that read a profile back). A profile is
// built from a plain description (ProfileData: sample types, samples with their stacks of frames)
// and interned on the way out: one string table, one Function per (name, file, start line), one
// Location per (function, line), one Mapping for the whole process.
//
// Also here, pure conversions from what V8's inspector gives to ProfileData:
//   - a CPU profile (Profiler.stop: nodes, samples, timeDeltas) → [samples/count, cpu/nanoseconds];
//   - a sampling heap profile (HeapProfiler.getSamplingProfile) → [inuse_space/bytes];
// and a delta of two profiles (Go's ?seconds= on the named profiles) and a text rendering (?debug=1).
import { gunzipSync, gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import type protobufNS from 'protobufjs';

// protobufjs is required on the first encoding, not at start: every command imports this module
// (through client/profiling.ts) and few ever write a profile. (As yamlmodule.ts explains, a literal
// `require` is bundled by esbuild and evaluated lazily; unbundled, Node's require loads it.)
type Protobuf = typeof protobufNS;
let protobufModule: Protobuf | undefined;
function protobuf(): Protobuf {
  return (protobufModule ??= (typeof require === 'function' ? require('protobufjs') : createRequire(import.meta.url)('protobufjs')) as Protobuf);
}

// ── the schema (google/pprof proto/profile.proto; field numbers as there) ────────────────────

const I64 = 'int64';
const U64 = 'uint64';
const PROFILE_SCHEMA = {
  nested: {
    perftools: {
      nested: {
        profiles: {
          nested: {
            Profile: {
              fields: {
                sampleType: { rule: 'repeated', type: 'ValueType', id: 1 },
                sample: { rule: 'repeated', type: 'Sample', id: 2 },
                mapping: { rule: 'repeated', type: 'Mapping', id: 3 },
                location: { rule: 'repeated', type: 'Location', id: 4 },
                function: { rule: 'repeated', type: 'Function', id: 5 },
                stringTable: { rule: 'repeated', type: 'string', id: 6 },
                dropFrames: { type: I64, id: 7 },
                keepFrames: { type: I64, id: 8 },
                timeNanos: { type: I64, id: 9 },
                durationNanos: { type: I64, id: 10 },
                periodType: { type: 'ValueType', id: 11 },
                period: { type: I64, id: 12 },
                comment: { rule: 'repeated', type: I64, id: 13 },
                defaultSampleType: { type: I64, id: 14 },
              },
            },
            ValueType: { fields: { type: { type: I64, id: 1 }, unit: { type: I64, id: 2 } } },
            Sample: {
              fields: {
                locationId: { rule: 'repeated', type: U64, id: 1 },
                value: { rule: 'repeated', type: I64, id: 2 },
                label: { rule: 'repeated', type: 'Label', id: 3 },
              },
            },
            Label: { fields: { key: { type: I64, id: 1 }, str: { type: I64, id: 2 }, num: { type: I64, id: 3 }, numUnit: { type: I64, id: 4 } } },
            Mapping: {
              fields: {
                id: { type: U64, id: 1 },
                memoryStart: { type: U64, id: 2 },
                memoryLimit: { type: U64, id: 3 },
                fileOffset: { type: U64, id: 4 },
                filename: { type: I64, id: 5 },
                buildId: { type: I64, id: 6 },
                hasFunctions: { type: 'bool', id: 7 },
                hasFilenames: { type: 'bool', id: 8 },
                hasLineNumbers: { type: 'bool', id: 9 },
                hasInlineFrames: { type: 'bool', id: 10 },
              },
            },
            Location: {
              fields: {
                id: { type: U64, id: 1 },
                mappingId: { type: U64, id: 2 },
                address: { type: U64, id: 3 },
                line: { rule: 'repeated', type: 'Line', id: 4 },
                isFolded: { type: 'bool', id: 5 },
              },
            },
            Line: { fields: { functionId: { type: U64, id: 1 }, line: { type: I64, id: 2 } } },
            Function: {
              fields: {
                id: { type: U64, id: 1 },
                name: { type: I64, id: 2 },
                systemName: { type: I64, id: 3 },
                filename: { type: I64, id: 4 },
                startLine: { type: I64, id: 5 },
              },
            },
          },
        },
      },
    },
  },
};

let profileType: protobufNS.Type | undefined;
function schema(): protobufNS.Type {
  return (profileType ??= protobuf().Root.fromJSON(PROFILE_SCHEMA).lookupType('perftools.profiles.Profile'));
}

// ── the plain description ───────────────────────────────────────────────────────────────────

export interface ValueType {
  type: string;
  unit: string;
}

/** one frame of a stack: a function (its name, file and first line) and the line in it, 1-based (0: unknown) */
export interface Frame {
  functionName: string;
  file: string;
  /** the function's first line, 1-based (0: unknown) */
  startLine: number;
  line: number;
}

export interface Sample {
  /** leaf first, as profile.proto orders location_id */
  stack: Frame[];
  /** one value per sample type */
  values: number[];
}

export interface ProfileData {
  sampleTypes: ValueType[];
  samples: Sample[];
  periodType?: ValueType;
  period?: number;
  /** when the collection started, nanoseconds since the epoch */
  timeNanos: bigint;
  durationNanos?: number;
  comments?: string[];
  /** the sample type tools show by default (absent: the last one, as profile.proto says) */
  defaultSampleType?: string;
  /** the main "binary" the mapping names (Keelson: the Node.js executable) */
  mainFile?: string;
}

/** nanoseconds since the epoch, now (Date.now's millisecond resolution) */
export function nowNanos(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

/** an int64 as protobufjs takes it without the long package: its two 32-bit halves */
function int64(v: bigint | number): { low: number; high: number; unsigned: boolean } | number {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v < 2 ** 31) return v;
  const b = BigInt.asUintN(64, typeof v === 'bigint' ? v : BigInt(Math.trunc(v)));
  return { low: Number(b & 0xffffffffn) | 0, high: Number(b >> 32n) | 0, unsigned: false };
}

function frameKey(f: Frame): string {
  return `${f.functionName}\0${f.file}\0${f.startLine}`;
}

/** The profile as profile.proto's message, not yet compressed. */
export function encodeProfileMessage(p: ProfileData): Uint8Array {
  const strings: string[] = [''];
  const stringIndex = new Map<string, number>([['', 0]]);
  const str = (s: string): number => {
    let i = stringIndex.get(s);
    if (i === undefined) {
      i = strings.length;
      strings.push(s);
      stringIndex.set(s, i);
    }
    return i;
  };
  const vt = (v: ValueType) => ({ type: str(v.type), unit: str(v.unit) });
  const functions: object[] = [];
  const functionIds = new Map<string, number>();
  const locations: object[] = [];
  const locationIds = new Map<string, number>();
  const locationOf = (f: Frame): number => {
    const fk = frameKey(f);
    let fid = functionIds.get(fk);
    if (fid === undefined) {
      fid = functions.length + 1;
      functionIds.set(fk, fid);
      const name = str(f.functionName);
      functions.push({ id: fid, name, systemName: name, filename: str(f.file), startLine: f.startLine });
    }
    const lk = `${fid}:${f.line}`;
    let lid = locationIds.get(lk);
    if (lid === undefined) {
      lid = locations.length + 1;
      locationIds.set(lk, lid);
      locations.push({ id: lid, mappingId: 1, line: [{ functionId: fid, line: f.line }] });
    }
    return lid;
  };
  const msg = {
    sampleType: p.sampleTypes.map(vt),
    sample: p.samples.map((s) => ({ locationId: s.stack.map(locationOf), value: s.values.map((v) => int64(Math.round(v))) })),
    // (one mapping for the process; its symbols are already in the profile, nothing is left to symbolize)
    mapping: [{ id: 1, filename: str(p.mainFile ?? process.execPath), hasFunctions: true, hasFilenames: true, hasLineNumbers: true }],
    location: locations,
    function: functions,
    stringTable: strings,
    timeNanos: int64(p.timeNanos),
    durationNanos: int64(p.durationNanos ?? 0),
    ...(p.periodType ? { periodType: vt(p.periodType) } : {}),
    period: int64(p.period ?? 0),
    comment: (p.comments ?? []).map(str),
    ...(p.defaultSampleType ? { defaultSampleType: str(p.defaultSampleType) } : {}),
  };
  // (plain objects straight to the encoder: fromObject would turn an int64's halves into a lossy
  // number when protobufjs runs without the long package; the string table, filled while the
  // rest was built, is the same array)
  const T = schema();
  return T.encode(msg).finish();
}

/** The profile as Go writes it: profile.proto's message, gzip-compressed (runtime/pprof uses gzip's BestSpeed). */
export function encodeProfile(p: ProfileData): Buffer {
  return gzipSync(encodeProfileMessage(p), { level: 1 });
}

function toBigInt(v: unknown): bigint {
  if (v == null) return 0n;
  if (typeof v === 'number') return BigInt(Math.trunc(v));
  if (typeof v === 'bigint') return v;
  if (typeof v === 'string') return BigInt(v);
  const l = v as { low: number; high: number; unsigned?: boolean };
  const u = (BigInt(l.high >>> 0) << 32n) | BigInt(l.low >>> 0);
  return l.unsigned ? u : BigInt.asIntN(64, u);
}

/** A decoded profile: the plain description, plus what the message held that it leaves out. */
export interface DecodedProfile extends ProfileData {
  mappings: { id: number; filename: string; hasFunctions: boolean }[];
  /** the raw message, as protobufjs decoded it */
  raw: Record<string, any>;
}

/**
 * Reads a profile: gzip-compressed (as written) or not. Throws on what is not a valid profile:
 * string_table[0] not "", a sample whose value count is not the sample types', an id that names
 * no location or function.
 */
export function decodeProfile(data: Uint8Array): DecodedProfile {
  const bytes = data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b ? gunzipSync(data) : data;
  const T = schema();
  const raw = T.toObject(T.decode(bytes), { arrays: true, defaults: true }) as Record<string, any>;
  const strings: string[] = raw.stringTable;
  if (strings.length === 0 || strings[0] !== '') throw new Error('string_table[0] must be ""');
  const s = (i: unknown): string => {
    const n = Number(toBigInt(i));
    if (!(n >= 0 && n < strings.length)) throw new Error(`string index ${n} out of range`);
    return strings[n]!;
  };
  const vt = (v: any): ValueType => ({ type: s(v.type), unit: s(v.unit) });
  const functions = new Map<number, { name: string; file: string; startLine: number }>();
  for (const f of raw.function) functions.set(Number(toBigInt(f.id)), { name: s(f.name), file: s(f.filename), startLine: Number(toBigInt(f.startLine)) });
  const locations = new Map<number, Frame[]>();
  for (const l of raw.location) {
    const frames = (l.line as any[]).map((ln) => {
      const f = functions.get(Number(toBigInt(ln.functionId)));
      if (!f) throw new Error(`location ${l.id} names function ${ln.functionId}, which is not there`);
      return { functionName: f.name, file: f.file, startLine: f.startLine, line: Number(toBigInt(ln.line)) };
    });
    locations.set(Number(toBigInt(l.id)), frames);
  }
  const sampleTypes = (raw.sampleType as any[]).map(vt);
  const samples = (raw.sample as any[]).map((x) => {
    const values = (x.value as any[]).map((v) => Number(toBigInt(v)));
    if (values.length !== sampleTypes.length) throw new Error(`a sample has ${values.length} values for ${sampleTypes.length} sample types`);
    const stack: Frame[] = [];
    for (const id of x.locationId as any[]) {
      const frames = locations.get(Number(toBigInt(id)));
      if (!frames) throw new Error(`a sample names location ${id}, which is not there`);
      stack.push(...frames);
    }
    return { stack, values };
  });
  return {
    sampleTypes,
    samples,
    periodType: raw.periodType ? vt(raw.periodType) : undefined,
    period: Number(toBigInt(raw.period)),
    timeNanos: toBigInt(raw.timeNanos),
    durationNanos: Number(toBigInt(raw.durationNanos)),
    comments: (raw.comment as any[]).map(s),
    defaultSampleType: raw.defaultSampleType ? s(raw.defaultSampleType) : undefined,
    mappings: (raw.mapping as any[]).map((m) => ({ id: Number(toBigInt(m.id)), filename: s(m.filename), hasFunctions: !!m.hasFunctions })),
    raw,
  };
}

// ── from V8's inspector ─────────────────────────────────────────────────────────────────────

/** Runtime.CallFrame: lineNumber and columnNumber are 0-based (-1: unknown) */
export interface V8CallFrame {
  functionName: string;
  scriptId: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

/** Profiler.Profile, what Profiler.stop answers (times in microseconds) */
export interface V8CpuProfile {
  nodes: { id: number; callFrame: V8CallFrame; hitCount?: number; children?: number[]; positionTicks?: { line: number; ticks: number }[] }[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** HeapProfiler.SamplingHeapProfile, what HeapProfiler.getSamplingProfile answers */
export interface V8SamplingHeapProfile {
  head: V8HeapNode;
  samples?: { size: number; nodeId: number; ordinal: number }[];
}
export interface V8HeapNode {
  callFrame: V8CallFrame;
  selfSize: number;
  id: number;
  children: V8HeapNode[];
}

/** the file a frame names: a path for a file: URL (what pprof's -list and the source view open), else the URL (node:internal/...) */
function fileOf(url: string): string {
  if (url.startsWith('file://')) {
    try {
      return fileURLToPath(url);
    } catch {
      return url;
    }
  }
  return url;
}

/** V8's pseudo-frames: (root) heads every tree; (idle), (program) and (garbage collector) stand for time outside JavaScript */
const ROOT = '(root)';
const IDLE = '(idle)';

function frameOf(cf: V8CallFrame, line?: number): Frame {
  const startLine = cf.lineNumber >= 0 ? cf.lineNumber + 1 : 0;
  return { functionName: cf.functionName || '(anonymous)', file: fileOf(cf.url), startLine, line: line ?? startLine };
}

export const CPU_SAMPLE_TYPES: ValueType[] = [
  { type: 'samples', unit: 'count' },
  { type: 'cpu', unit: 'nanoseconds' },
];

/**
 * A V8 CPU profile as Go's CPU profile: [samples/count, cpu/nanoseconds], period_type cpu/nanoseconds.
 *
 * - Each V8 sample counts 1 and one sampling period of CPU time, as each of Go's does (the time
 *   between two of V8's samples is no measure: the sampler skips beats while the thread waits).
 *   Samples of "(idle)" (the event loop waiting, off the CPU) are left out, as Go's profiler,
 *   which counts CPU time, never sees a goroutine that waits; "(program)" (V8's and Node's own
 *   native code) and "(garbage collector)" stay.
 * - A stack is the node's path up from the sample to (root), which is left out. A caller's line is
 *   its function's first line (V8 records no call-site lines); the leaf's samples are split by
 *   line as V8's positionTicks split them, so that `pprof -list` shows the hot lines.
 */
export function cpuProfileFromV8(v8: V8CpuProfile, opts: { startedNanos: bigint; periodNanos: number; mainFile?: string }): ProfileData {
  const byId = new Map(v8.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of v8.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const perNode = new Map<number, number>();
  for (const id of v8.samples ?? []) {
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === IDLE || node.callFrame.functionName === ROOT) continue;
    perNode.set(id, (perNode.get(id) ?? 0) + 1);
  }
  const stackCache = new Map<number, Frame[]>();
  const callers = (id: number | undefined): Frame[] => {
    if (id === undefined) return [];
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === ROOT) return [];
    let s = stackCache.get(id);
    if (!s) {
      s = [frameOf(node.callFrame), ...callers(parent.get(id))];
      stackCache.set(id, s);
    }
    return s;
  };
  const period = opts.periodNanos;
  const out: Sample[] = [];
  for (const [id, count] of perNode) {
    const node = byId.get(id)!;
    const up = callers(parent.get(id));
    const ticks = (node.positionTicks ?? []).filter((p) => p.ticks > 0);
    const total = ticks.reduce((a, p) => a + p.ticks, 0);
    if (total > 0 && ticks.length > 1) {
      // split by line as the ticks say (what rounding leaves goes to the hottest line)
      const sorted = [...ticks].sort((a, b) => b.ticks - a.ticks);
      const shares = sorted.map((p) => Math.floor((count * p.ticks) / total));
      shares[0]! += count - shares.reduce((a, b) => a + b, 0);
      sorted.forEach((p, i) => {
        if (shares[i]! > 0) out.push({ stack: [frameOf(node.callFrame, p.line), ...up], values: [shares[i]!, shares[i]! * period] });
      });
    } else {
      const line = total > 0 ? ticks[0]!.line : undefined;
      out.push({ stack: [frameOf(node.callFrame, line), ...up], values: [count, count * period] });
    }
  }
  return {
    sampleTypes: CPU_SAMPLE_TYPES,
    samples: out,
    periodType: { type: 'cpu', unit: 'nanoseconds' },
    period: opts.periodNanos,
    timeNanos: opts.startedNanos,
    durationNanos: Math.max(0, Math.round((v8.endTime - v8.startTime) * 1000)),
    mainFile: opts.mainFile,
  };
}

export const HEAP_SAMPLE_TYPES: ValueType[] = [{ type: 'inuse_space', unit: 'bytes' }];

/**
 * V8's sampling heap profile as Go's heap profile: [inuse_space/bytes], period_type space/bytes,
 * period the sampling interval.
 *
 * V8 samples one allocation per `samplingIntervalBytes` on average and keeps the samples whose
 * objects are still alive; each sample's size is the sampled object's size already multiplied by
 * its unsampling factor (an estimate of the live bytes it stands for, as Go's inuse_space is).
 * Go's heap profile also has inuse_objects, alloc_objects and alloc_space: the inspector gives
 * size × count, not the two apart (an allocation of 32 bytes and one of 40 can report the same
 * product), so no object count can be recovered, and objects already collected are not kept.
 * Stacks are the allocation's path up from the sampled node to (root), which is left out; V8
 * records no lines, so each frame's line is its function's first line.
 */
export function heapProfileFromV8(v8: V8SamplingHeapProfile, opts: { timeNanos: bigint; samplingIntervalBytes: number; mainFile?: string }): ProfileData {
  const stacks = new Map<number, Frame[]>();
  const walk = (n: V8HeapNode, up: Frame[]): void => {
    const here = n.callFrame.functionName === ROOT ? up : [frameOf(n.callFrame), ...up];
    stacks.set(n.id, here);
    for (const c of n.children ?? []) walk(c, here);
  };
  // (the recursion is as deep as the deepest JavaScript stack an allocation was sampled at)
  walk(v8.head, []);
  const perNode = new Map<number, number>();
  for (const s of v8.samples ?? []) perNode.set(s.nodeId, (perNode.get(s.nodeId) ?? 0) + s.size);
  const samples: Sample[] = [];
  for (const [id, bytes] of perNode) {
    const stack = stacks.get(id);
    if (stack) samples.push({ stack, values: [bytes] });
  }
  return {
    sampleTypes: HEAP_SAMPLE_TYPES,
    samples,
    periodType: { type: 'space', unit: 'bytes' },
    period: opts.samplingIntervalBytes,
    timeNanos: opts.timeNanos,
    mainFile: opts.mainFile,
  };
}

/** An empty profile of the given sample types (Go's answer for a profile nothing was recorded in). */
export function emptyProfile(sampleTypes: ValueType[], opts: { timeNanos: bigint; periodType?: ValueType; period?: number; comments?: string[] }): ProfileData {
  return { sampleTypes, samples: [], timeNanos: opts.timeNanos, periodType: opts.periodType, period: opts.period, comments: opts.comments };
}

function stackKey(s: Frame[]): string {
  return s.map((f) => `${frameKey(f)}\0${f.line}`).join('\n');
}

/**
 * p1 − p0 (Go's delta profiles, ?seconds=N on the named profiles: the first scaled by −1 and
 * merged into the second). Samples whose values all come to zero are left out.
 */
export function deltaProfile(p0: ProfileData, p1: ProfileData): ProfileData {
  const acc = new Map<string, Sample>();
  const add = (p: ProfileData, sign: number) => {
    for (const s of p.samples) {
      const k = stackKey(s.stack);
      const cur = acc.get(k);
      if (cur) cur.values = cur.values.map((v, i) => v + sign * (s.values[i] ?? 0));
      else acc.set(k, { stack: s.stack, values: s.values.map((v) => sign * v) });
    }
  };
  add(p0, -1);
  add(p1, 1);
  return {
    ...p1,
    samples: [...acc.values()].filter((s) => s.values.some((v) => v !== 0)),
    durationNanos: Number(p1.timeNanos - p0.timeNanos),
  };
}

/**
 * A profile as text (?debug=1). Go writes each profile's legacy text format there; Keelson's
 * profiles have no program counters to print, so this is a text of their own: a header naming
 * the sample types, then each sample, the largest last value first: its values, then its stack,
 * one `#\tfunction\tfile:line` per frame, leaf first.
 */
export function profileText(name: string, p: ProfileData): string {
  const types = p.sampleTypes.map((t) => `${t.type}/${t.unit}`).join(' ');
  let out = `${name} profile: ${p.samples.length} samples [${types}]`;
  if (p.periodType) out += ` @ period ${p.period ?? 0} ${p.periodType.type}/${p.periodType.unit}`;
  out += '\n';
  for (const c of p.comments ?? []) out += `# ${c}\n`;
  const last = p.sampleTypes.length - 1;
  const sorted = [...p.samples].sort((a, b) => (b.values[last] ?? 0) - (a.values[last] ?? 0));
  for (const s of sorted) {
    out += `\n${s.values.join(' ')} @\n`;
    for (const f of s.stack) out += `#\t${f.functionName}\t${f.file}:${f.line}\n`;
  }
  return out;
}
