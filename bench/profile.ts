// Summarizes a V8 CPU profile (`node --cpu-prof`, e.g. from `node dist/bench/run.js --only creates
// --cpu-prof /tmp/prof`): where the process spent its busy time, by function (self and inclusive)
// and by file, with compiled locations mapped back to the TypeScript sources through the source
// maps. Prints one JSON document.
//
//   node dist/bench/profile.js <file.cpuprofile> [--top 25] [--filter <substring of a function or file>]
//                              [--group label=substring ...]
//
// --group (repeatable) splits the busy time into disjoint groups: each sample goes to the first
// group, in the order given, with a frame on its stack whose "function file:line" contains the
// substring; the rest is "other". --per N divides every figure by N (e.g. requests served) and
// reports microseconds per unit as well. --from-ms A --to-ms B keep only the samples taken between
// A and B ms after the profile began (the busy time per second, `busyMsBySecond`, shows where the
// measured rounds are), so that start-up does not blur a steady-state profile.
import { readFileSync } from 'node:fs';
import { label, type CallFrame } from './sources.js';

interface Node {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const args = process.argv.slice(2);
const file = args.find((a, i) => !a.startsWith('--') && (i === 0 || !['--top', '--filter', '--group', '--per', '--from-ms', '--to-ms'].includes(args[i - 1]!)));
if (!file) {
  process.stderr.write('usage: profile.js <file.cpuprofile> [--top N] [--filter text]\n');
  process.exit(2);
}
const topIdx = args.indexOf('--top');
const TOP = topIdx >= 0 ? Number(args[topIdx + 1]) : 25;
const filterIdx = args.indexOf('--filter');
const FILTER = filterIdx >= 0 ? args[filterIdx + 1] : undefined;
const GROUPS: { label: string; text: string }[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] !== '--group') continue;
  const g = args[i + 1] ?? '';
  const eq = g.indexOf('=');
  if (eq > 0) GROUPS.push({ label: g.slice(0, eq), text: g.slice(eq + 1) });
}
const perIdx = args.indexOf('--per');
const PER = perIdx >= 0 ? Number(args[perIdx + 1]) : 0;
const numArg = (name: string, dflt: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const FROM_MS = numArg('--from-ms', 0);
const TO_MS = numArg('--to-ms', Infinity);

const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map<number, Node>();
const parent = new Map<number, number>();
for (const n of prof.nodes) {
  byId.set(n.id, n);
  for (const c of n.children ?? []) parent.set(c, n.id);
}
const labels = new Map<number, { fn: string; where: string; file: string }>();
for (const n of prof.nodes) labels.set(n.id, label(n.callFrame));

const self = new Map<string, number>();
const incl = new Map<string, number>();
const files = new Map<string, number>();
let total = 0;
let idle = 0;
let filtered = 0;
const groupMs = new Map<string, number>();
const bySecond: number[] = [];
let at = 0; // ms since the profile began
for (let i = 0; i < prof.samples.length; i++) {
  at += (prof.timeDeltas[i] ?? 0) / 1000;
  const dt = (prof.timeDeltas[i + 1] ?? 0) / 1000; // the delta after a sample is the time it stands for
  const id = prof.samples[i]!;
  const l = labels.get(id)!;
  if (l.fn !== '(idle)') bySecond[Math.floor(at / 1000)] = (bySecond[Math.floor(at / 1000)] ?? 0) + dt;
  if (at < FROM_MS || at >= TO_MS) continue;
  total += dt;
  if (l.fn === '(idle)') {
    idle += dt;
    continue;
  }
  const key = `${l.fn} ${l.where}`;
  self.set(key, (self.get(key) ?? 0) + dt);
  files.set(l.file, (files.get(l.file) ?? 0) + dt);
  const seen = new Set<string>();
  let hit = FILTER === undefined;
  if (GROUPS.length) {
    const stack: string[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const cl = labels.get(cur)!;
      stack.push(`${cl.fn} ${cl.where}`);
    }
    const g = GROUPS.find((gr) => stack.some((f) => f.includes(gr.text)));
    const gl = g ? g.label : 'other';
    groupMs.set(gl, (groupMs.get(gl) ?? 0) + dt);
  }
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const cl = labels.get(cur)!;
    const k = `${cl.fn} ${cl.where}`;
    if (FILTER !== undefined && k.includes(FILTER)) hit = true;
    if (seen.has(k)) continue;
    seen.add(k);
    incl.set(k, (incl.get(k) ?? 0) + dt);
  }
  if (hit) filtered += dt;
}
const busy = total - idle;
const top = (m: Map<string, number>) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP)
    .map(([k, ms]) => ({ ms: Math.round(ms), pctOfBusy: Math.round((ms * 1000) / busy) / 10, fn: k }));
const out: Record<string, unknown> = {
  profile: file,
  wallMs: Math.round((prof.endTime - prof.startTime) / 1000),
  busyMs: Math.round(busy),
  idleMs: Math.round(idle),
  busyMsBySecond: Array.from(bySecond, (v) => Math.round(v ?? 0)).join(' '),
  selfByFunction: top(self),
  inclusiveByFunction: top(incl),
  selfByFile: top(files),
};
if (GROUPS.length) {
  out.groups = [...GROUPS.map((g) => g.label), 'other'].map((label) => {
    const ms = groupMs.get(label) ?? 0;
    const row: Record<string, unknown> = { group: label, ms: Math.round(ms), pctOfBusy: Math.round((ms * 1000) / busy) / 10 };
    if (PER > 0) row.usPerUnit = Math.round((ms * 1000) / PER);
    return row;
  });
  if (PER > 0) out.busyUsPerUnit = Math.round((busy * 1000) / PER);
}
if (FILTER !== undefined) out.filter = { text: FILTER, ms: Math.round(filtered), pctOfBusy: Math.round((filtered * 1000) / busy) / 10 };
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
