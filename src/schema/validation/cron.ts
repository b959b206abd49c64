// The cron schedules Kubernetes accepts: the standard five-field syntax with names, ranges,
// steps and '?', the @yearly/@monthly/@weekly/@daily/@midnight/@hourly/@every descriptors and a
// TZ=/CRON_TZ= prefix, with the error texts of the parser Kubernetes uses (robfig/cron v3
// ParseStandard), which the API server puts in its messages as they are.

import { goParseDuration, goQuote } from '../../machinery/gostrings.js';

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const MONTHS: Record<string, number> = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };
const DAYS: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };
const FIELDS: Bounds[] = [
  { min: 0, max: 59 }, // seconds (always "0" with the standard parser)
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS },
  { min: 0, max: 6, names: DAYS },
];

class CronError extends Error {}

/** strconv.Atoi with Go's error text */
function atoi(s: string): number {
  if (!/^[+-]?[0-9]+$/.test(s)) throw new CronError(`strconv.Atoi: parsing ${goQuote(s)}: invalid syntax`);
  const n = Number(s);
  if (!Number.isSafeInteger(n) || n > 9223372036854775807 || n < -9223372036854775808) throw new CronError(`strconv.Atoi: parsing ${goQuote(s)}: value out of range`);
  return n;
}

function mustParseInt(expr: string): number {
  let n: number;
  try {
    n = atoi(expr);
  } catch (e) {
    throw new CronError(`failed to parse int from ${expr}: ${(e as Error).message}`);
  }
  if (n < 0) throw new CronError(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

function parseIntOrName(expr: string, names?: Record<string, number>): number {
  if (names) {
    const v = names[expr.toLowerCase()];
    if (v !== undefined) return v;
  }
  return mustParseInt(expr);
}

/** a field's values, and whether it was '*' or '?' (robfig's starBit: day-of-month and day-of-week then AND, else OR) */
interface Field {
  values: Set<number>;
  star: boolean;
}

function getRange(expr: string, r: Bounds, into: Field): void {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = rangeAndStep[0]!.split('-');
  const single = lowAndHigh.length === 1;
  let start: number;
  let end: number;
  let star = false;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = r.min;
    end = r.max;
    star = true;
  } else {
    start = parseIntOrName(lowAndHigh[0]!, r.names);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1]!, r.names);
    else throw new CronError(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = mustParseInt(rangeAndStep[1]!);
    if (single) end = r.max;
    if (step > 1) star = false;
  } else if (rangeAndStep.length > 2) throw new CronError(`too many slashes: ${expr}`);
  if (start < r.min) throw new CronError(`beginning of range (${start}) below minimum (${r.min}): ${expr}`);
  if (end > r.max) throw new CronError(`end of range (${end}) above maximum (${r.max}): ${expr}`);
  if (start > end) throw new CronError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new CronError(`step of range should be a positive number: ${expr}`);
  if (star) into.star = true;
  for (let i = start; i <= end; i += step) into.values.add(i);
}

function getField(field: string, r: Bounds): Field {
  const f: Field = { values: new Set(), star: false };
  for (const expr of field.split(',').filter((x) => x !== '')) getRange(expr, r, f);
  return f;
}

// ---- Go's time.ParseDuration ----

/** null when Go's time.ParseDuration takes the text, else its error text */
export function parseGoDuration(orig: string): string | null {
  try {
    goParseDuration(orig);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

// ---- time zones (Go's time.LoadLocation) ----

let zoneCache: Set<string> | undefined;

/** null when Go's time.LoadLocation would load the zone, else its error text */
export function loadLocationError(name: string): string | null {
  if (name === '' || name === 'UTC' || name === 'Local') return null;
  zoneCache ??= new Set((Intl as any).supportedValuesOf ? (Intl as any).supportedValuesOf('timeZone') : []);
  if (zoneCache.has(name)) return null;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
  } catch {
    return `unknown time zone ${name}`;
  }
  // Intl matches names without regard to case; the zoneinfo files Go reads do not
  if (!name.split('/').every((p) => /^[A-Z]/.test(p))) return `unknown time zone ${name}`;
  return null;
}

/** The error text of robfig/cron's ParseStandard for a schedule, or null when it parses. */
export function cronParseError(spec: string): string | null {
  try {
    parseStandard(spec);
    return null;
  } catch (e) {
    if (e instanceof CronError) return e.message;
    throw e;
  }
}

function parseStandard(spec0: string): Schedule {
  let spec = spec0;
  let zone: string | undefined;
  if (spec.length === 0) throw new CronError('empty spec string');
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const i = spec.indexOf(' ');
    const eq = spec.indexOf('=');
    const loc = i < 0 ? spec.slice(eq + 1) : spec.slice(eq + 1, i);
    const err = loadLocationError(loc);
    if (err) throw new CronError(`provided bad location ${loc}: ${err}`);
    zone = loc;
    spec = i < 0 ? '' : spec.slice(i).trim();
  }
  if (spec.startsWith('@')) {
    const d = DESCRIPTORS[spec];
    if (d) return fieldsSchedule(d, zone);
    if (spec.startsWith('@every ')) {
      const text = spec.slice('@every '.length);
      const err = parseGoDuration(text);
      if (err) throw new CronError(`failed to parse duration ${spec}: ${err}`);
      // (robfig: rounded down to whole seconds, at least one)
      const ms = Math.max(1000, Number(goParseDuration(text) / 1_000_000_000n) * 1000);
      return { zone, next: (t) => Math.floor(t / 1000) * 1000 + ms };
    }
    throw new CronError(`unrecognized descriptor: ${spec}`);
  }
  const fields = spec.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5) throw new CronError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  const expanded = ['0', ...fields];
  return fieldsSchedule(expanded.map((f, i) => getField(f, FIELDS[i]!)), zone);
}

// ---- when a schedule fires (robfig/cron v3's SpecSchedule.Next) ----

/** a parsed schedule: the first time after `t` (ms since the epoch) it fires, or undefined when none within five years */
export interface Schedule {
  /** the TZ= or CRON_TZ= zone of the spec, if any */
  zone?: string;
  next(t: number, zone?: string): number | undefined;
}

const b = (...v: number[]): Field => ({ values: new Set(v), star: false });
const all = (min: number, max: number): Field => ({ values: new Set(Array.from({ length: max - min + 1 }, (_, i) => min + i)), star: true });
/** the descriptors' fields: second, minute, hour, day of month, month, day of week */
const DESCRIPTORS: Record<string, Field[]> = {
  '@yearly': [b(0), b(0), b(0), b(1), b(1), all(0, 6)],
  '@annually': [b(0), b(0), b(0), b(1), b(1), all(0, 6)],
  '@monthly': [b(0), b(0), b(0), b(1), all(1, 12), all(0, 6)],
  '@weekly': [b(0), b(0), b(0), all(1, 31), all(1, 12), b(0)],
  '@daily': [b(0), b(0), b(0), all(1, 31), all(1, 12), all(0, 6)],
  '@midnight': [b(0), b(0), b(0), all(1, 31), all(1, 12), all(0, 6)],
  '@hourly': [b(0), b(0), all(0, 23), all(1, 31), all(1, 12), all(0, 6)],
};

/** the parsed schedule of a spec; throws robfig's error text for one Kubernetes refuses */
export function parseSchedule(spec: string): Schedule {
  try {
    return parseStandard(spec);
  } catch (e) {
    if (e instanceof CronError) throw new Error(e.message);
    throw e;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** the wall clock of an instant in a zone, as the epoch ms of the same wall clock in UTC */
function wallClock(t: number, zone: string): number {
  if (zone === 'UTC') return t;
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(zone, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(t)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return Date.UTC(p['year']!, p['month']! - 1, p['day']!, p['hour']!, p['minute']!, p['second']!) + (t % 1000 + 1000) % 1000;
}

/** the zone's offset from UTC at an instant, in ms */
export function zoneOffset(t: number, zone: string): number {
  return wallClock(t, zone) - t;
}

/** the instant of a wall clock in a zone (a wall clock in a gap of the zone: the instant after it) */
function fromWallClock(w: number, zone: string): number {
  let t = w - zoneOffset(w, zone);
  t = w - zoneOffset(t, zone);
  return t;
}

function fieldsSchedule(f: Field[], zone: string | undefined): Schedule {
  const [, minute, hour, dom, month, dow] = f as [Field, Field, Field, Field, Field, Field];
  const hasBit = (field: Field, v: number) => field.values.has(v);
  const dayMatches = (d: Date): boolean => {
    const domMatch = dom.values.has(d.getUTCDate());
    const dowMatch = dow.values.has(d.getUTCDay());
    return dom.star || dow.star ? domMatch && dowMatch : domMatch || dowMatch;
  };
  return {
    zone,
    next(t: number, defaultZone = 'UTC'): number | undefined {
      const z = zone ?? defaultZone;
      // the next whole minute after t, on the zone's wall clock (treated as UTC for the calendar)
      const start = wallClock(t, z);
      const d = new Date(Math.floor(start / 60000) * 60000 + 60000);
      const limit = d.getUTCFullYear() + 5;
      // (robfig's search: the month, then the day, the hour and the minute, each reset below when it moves)
      for (;;) {
        if (d.getUTCFullYear() > limit) return undefined;
        if (!hasBit(month, d.getUTCMonth() + 1)) {
          d.setUTCMonth(d.getUTCMonth() + 1, 1);
          d.setUTCHours(0, 0, 0, 0);
          continue;
        }
        if (!dayMatches(d)) {
          d.setUTCDate(d.getUTCDate() + 1);
          d.setUTCHours(0, 0, 0, 0);
          continue;
        }
        if (!hasBit(hour, d.getUTCHours())) {
          d.setUTCHours(d.getUTCHours() + 1, 0, 0, 0);
          continue;
        }
        if (!hasBit(minute, d.getUTCMinutes())) {
          d.setUTCMinutes(d.getUTCMinutes() + 1, 0, 0);
          continue;
        }
        return fromWallClock(d.getTime(), z);
      }
    },
  };
}
