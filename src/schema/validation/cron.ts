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

function getRange(expr: string, r: Bounds): void {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = rangeAndStep[0]!.split('-');
  const single = lowAndHigh.length === 1;
  let start: number;
  let end: number;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = r.min;
    end = r.max;
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
  } else if (rangeAndStep.length > 2) throw new CronError(`too many slashes: ${expr}`);
  if (start < r.min) throw new CronError(`beginning of range (${start}) below minimum (${r.min}): ${expr}`);
  if (end > r.max) throw new CronError(`end of range (${end}) above maximum (${r.max}): ${expr}`);
  if (start > end) throw new CronError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new CronError(`step of range should be a positive number: ${expr}`);
}

function getField(field: string, r: Bounds): void {
  for (const expr of field.split(',').filter((x) => x !== '')) getRange(expr, r);
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

function parseStandard(spec0: string): void {
  let spec = spec0;
  if (spec.length === 0) throw new CronError('empty spec string');
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const i = spec.indexOf(' ');
    const eq = spec.indexOf('=');
    const loc = i < 0 ? spec.slice(eq + 1) : spec.slice(eq + 1, i);
    const err = loadLocationError(loc);
    if (err) throw new CronError(`provided bad location ${loc}: ${err}`);
    spec = i < 0 ? '' : spec.slice(i).trim();
  }
  if (spec.startsWith('@')) {
    switch (spec) {
      case '@yearly':
      case '@annually':
      case '@monthly':
      case '@weekly':
      case '@daily':
      case '@midnight':
      case '@hourly':
        return;
    }
    if (spec.startsWith('@every ')) {
      const err = parseGoDuration(spec.slice('@every '.length));
      if (err) throw new CronError(`failed to parse duration ${spec}: ${err}`);
      return;
    }
    throw new CronError(`unrecognized descriptor: ${spec}`);
  }
  const fields = spec.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5) throw new CronError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  const expanded = ['0', ...fields];
  expanded.forEach((f, i) => getField(f, FIELDS[i]!));
}
