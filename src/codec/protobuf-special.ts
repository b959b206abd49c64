// Value conversions for the types whose JSON form differs from their protobuf message:
// metav1.Time and MicroTime (RFC 3339 strings ⇄ {seconds, nanos}) and metav1.Duration
// (Go duration strings ⇄ int64 nanoseconds). They follow Go's time package:
// Time.MarshalJSON prints `2006-01-02T15:04:05Z` (UTC, whole seconds), MicroTime prints
// `2006-01-02T15:04:05.000000Z`, Duration prints time.Duration.String().
import { ProtobufError } from './protobuf-wire.js';
import { goParseDuration } from '../machinery/gostrings.js';

/** seconds since the Unix epoch of Go's zero time.Time (0001-01-01T00:00:00Z) */
export const GO_ZERO_TIME_SECONDS = -62135596800;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** seconds of the instant (floor) and the nanoseconds within that second */
export interface Instant {
  seconds: number;
  nanos: number;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
}

/** days since 1970-01-01 of a proleptic Gregorian date (month 1..12) */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** [year, month 1..12, day] of a number of days since 1970-01-01 */
function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

// Objects repeat their timestamps (creation, managedFields, conditions), and a list repeats
// them across objects: both directions keep a small cache.
const CACHE_MAX = 4096;
const parsed = new Map<string, Instant>();
const formatted = new Map<number, string>();

function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** parses an RFC 3339 timestamp as Go's time.Parse(time.RFC3339, s) accepts it */
export function parseRFC3339(s: string, what: string): Instant {
  const hit = parsed.get(s);
  if (hit) return hit;
  const v = parseUncached(s, what);
  if (parsed.size >= CACHE_MAX) parsed.clear();
  parsed.set(s, v);
  return v;
}

function parseUncached(s: string, what: string): Instant {
  let year: number, month: number, day: number, hour: number, min: number, sec: number;
  let nanos = 0;
  let offset = 0;
  // the canonical form first: 2006-01-02T15:04:05Z
  if (s.length === 20 && s.charCodeAt(19) === 90 && s.charCodeAt(10) === 84 && s[4] === '-' && s[7] === '-' && s[13] === ':' && s[16] === ':') {
    year = digits(s, 0, 4);
    month = digits(s, 5, 2);
    day = digits(s, 8, 2);
    hour = digits(s, 11, 2);
    min = digits(s, 14, 2);
    sec = digits(s, 17, 2);
    if (year < 0 || month < 0 || day < 0 || hour < 0 || min < 0 || sec < 0) throw new ProtobufError(`${what}: ${JSON.stringify(s)} is not an RFC 3339 timestamp`);
  } else {
    const m = RFC3339.exec(s);
    if (!m) throw new ProtobufError(`${what}: ${JSON.stringify(s)} is not an RFC 3339 timestamp`);
    year = +m[1];
    month = +m[2];
    day = +m[3];
    hour = +m[4];
    min = +m[5];
    sec = +m[6];
    if (m[7]) nanos = +(m[7] + '000000000').slice(0, 9);
    if (m[9]) {
      const oh = +m[10];
      const om = +m[11];
      if (oh > 23 || om > 59) throw new ProtobufError(`${what}: ${JSON.stringify(s)}: time zone offset out of range`);
      offset = (oh * 60 + om) * 60 * (m[9] === '-' ? -1 : 1);
    }
  }
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || min > 59 || sec > 59) {
    throw new ProtobufError(`${what}: ${JSON.stringify(s)}: date or time out of range`);
  }
  const seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + min * 60 + sec - offset;
  return { seconds, nanos };
}

function pad2(n: number): string {
  return n < 10 ? '0' + n : String(n);
}

function pad(n: number, w: number): string {
  let s = String(n);
  while (s.length < w) s = '0' + s;
  return s;
}

function isoSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) throw new ProtobufError(`protobuf: timestamp ${seconds}s is out of range`);
  const days = Math.floor(seconds / 86400);
  let rest = seconds - days * 86400;
  const [y, mo, d] = civilFromDays(days);
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const mi = Math.floor(rest / 60);
  const se = rest - mi * 60;
  const year = y >= 0 && y <= 9999 ? pad(y, 4) : String(y);
  return `${year}-${pad2(mo)}-${pad2(d)}T${pad2(h)}:${pad2(mi)}:${pad2(se)}`;
}

/** metav1.Time as JSON: whole seconds, UTC */
export function formatTime(seconds: number): string {
  const hit = formatted.get(seconds);
  if (hit !== undefined) return hit;
  const v = isoSeconds(seconds) + 'Z';
  if (formatted.size >= CACHE_MAX) formatted.clear();
  formatted.set(seconds, v);
  return v;
}

/** metav1.MicroTime as JSON: six fractional digits, UTC */
export function formatMicroTime(seconds: number, nanos: number): string {
  return `${isoSeconds(seconds)}.${pad(Math.floor(nanos / 1000), 6)}Z`;
}

// ---- durations (Go time.Duration) ----

/**
 * Go's time.ParseDuration ("300ms", "-1.5h", "2h45m"), returning nanoseconds; a bad duration is a
 * ProtobufError in the time package's words, `what` in place of its `time` prefix.
 */
export function parseGoDuration(s: string, what: string): bigint {
  try {
    return goParseDuration(s);
  } catch (e) {
    throw new ProtobufError(what + (e as Error).message.slice('time'.length));
  }
}
