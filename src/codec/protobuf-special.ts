// Value conversions for the types whose JSON form differs from their protobuf message:
// metav1.Time and MicroTime (RFC 3339 strings ⇄ {seconds, nanos}) and metav1.Duration
// (Go duration strings ⇄ int64 nanoseconds). They follow Go's time package:
// Time.MarshalJSON prints `2006-01-02T15:04:05Z` (UTC, whole seconds), MicroTime prints
// `2006-01-02T15:04:05.000000Z`, Duration prints time.Duration.String().
import { ProtobufError } from './protobuf-wire.js';

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

/** parses an RFC 3339 timestamp as Go's time.Parse(time.RFC3339, s) accepts it */
export function parseRFC3339(s: string, what: string): Instant {
  const m = RFC3339.exec(s);
  if (!m) throw new ProtobufError(`${what}: ${JSON.stringify(s)} is not an RFC 3339 timestamp`);
  const year = +m[1];
  const month = +m[2];
  const day = +m[3];
  const hour = +m[4];
  const min = +m[5];
  const sec = +m[6];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || min > 59 || sec > 59) {
    throw new ProtobufError(`${what}: ${JSON.stringify(s)}: date or time out of range`);
  }
  let offset = 0;
  if (m[9]) {
    const oh = +m[10];
    const om = +m[11];
    if (oh > 23 || om > 59) throw new ProtobufError(`${what}: ${JSON.stringify(s)}: time zone offset out of range`);
    offset = (oh * 60 + om) * 60 * (m[9] === '-' ? -1 : 1);
  }
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, min, sec, 0);
  const seconds = d.getTime() / 1000 - offset;
  let nanos = 0;
  if (m[7]) nanos = +(m[7] + '000000000').slice(0, 9);
  return { seconds, nanos };
}

function pad(n: number, w: number): string {
  let s = String(n);
  while (s.length < w) s = '0' + s;
  return s;
}

function isoSeconds(seconds: number): string {
  const d = new Date(seconds * 1000);
  if (Number.isNaN(d.getTime())) throw new ProtobufError(`protobuf: timestamp ${seconds}s is out of range`);
  const y = d.getUTCFullYear();
  const year = y >= 0 && y <= 9999 ? pad(y, 4) : String(y);
  return `${year}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
}

/** metav1.Time as JSON: whole seconds, UTC */
export function formatTime(seconds: number): string {
  return isoSeconds(seconds) + 'Z';
}

/** metav1.MicroTime as JSON: six fractional digits, UTC */
export function formatMicroTime(seconds: number, nanos: number): string {
  return `${isoSeconds(seconds)}.${pad(Math.floor(nanos / 1000), 6)}Z`;
}

// ---- durations (Go time.Duration) ----

const NS = 1n;
const US = 1000n * NS;
const MS = 1000n * US;
const SEC = 1000n * MS;
const MIN = 60n * SEC;
const HOUR = 60n * MIN;
const UNITS: Record<string, bigint> = {
  ns: NS,
  us: US,
  'µs': US, // U+00B5
  'μs': US, // U+03BC
  ms: MS,
  s: SEC,
  m: MIN,
  h: HOUR,
};
const MAX_I64 = (1n << 63n) - 1n;

/** Go's time.ParseDuration: "300ms", "-1.5h", "2h45m"; returns nanoseconds */
export function parseGoDuration(s: string, what: string): bigint {
  const orig = s;
  const bad = (): never => {
    throw new ProtobufError(`${what}: invalid duration ${JSON.stringify(orig)}`);
  };
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') bad();
  let total = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || (s[0] >= '0' && s[0] <= '9'))) bad();
    let i = 0;
    while (i < s.length && s[i] >= '0' && s[i] <= '9') i++;
    const intDigits = s.slice(0, i);
    let v = intDigits === '' ? 0n : BigInt(intDigits);
    const pre = intDigits !== '';
    s = s.slice(i);
    let fracDigits = '';
    let post = false;
    if (s[0] === '.') {
      s = s.slice(1);
      let j = 0;
      while (j < s.length && s[j] >= '0' && s[j] <= '9') j++;
      fracDigits = s.slice(0, j);
      post = j > 0;
      s = s.slice(j);
    }
    if (!pre && !post) bad();
    let k = 0;
    while (k < s.length && s[k] !== '.' && !(s[k] >= '0' && s[k] <= '9')) k++;
    const u = s.slice(0, k);
    if (u === '') throw new ProtobufError(`${what}: missing unit in duration ${JSON.stringify(orig)}`);
    const unit = UNITS[u];
    if (unit === undefined) throw new ProtobufError(`${what}: unknown unit ${JSON.stringify(u)} in duration ${JSON.stringify(orig)}`);
    s = s.slice(k);
    if (v > MAX_I64 / unit) bad();
    v *= unit;
    if (fracDigits !== '') {
      // Go: v += uint64(float64(f) * (float64(unit) / scale)), with f and scale truncated to fit
      let f = 0;
      let scale = 1;
      for (const ch of fracDigits) {
        if (f > Number.MAX_SAFE_INTEGER / 10) break;
        f = f * 10 + (ch.charCodeAt(0) - 48);
        scale *= 10;
      }
      v += BigInt(Math.trunc(f * (Number(unit) / scale)));
      if (v > MAX_I64 + (neg ? 1n : 0n)) bad();
    }
    total += v;
    if (total > MAX_I64 + (neg ? 1n : 0n)) bad();
  }
  return neg ? -total : total;
}

function fmtFrac(v: bigint, prec: number): [string, bigint] {
  let out = '';
  let print = false;
  for (let i = 0; i < prec; i++) {
    const digit = v % 10n;
    print = print || digit !== 0n;
    if (print) out = String(digit) + out;
    v /= 10n;
  }
  if (print) out = '.' + out;
  return [out, v];
}

/** Go's time.Duration.String() of a number of nanoseconds */
export function formatGoDuration(d: bigint): string {
  if (d === 0n) return '0s';
  const neg = d < 0n;
  let u = neg ? -d : d;
  let out: string;
  if (u < SEC) {
    let prec: number;
    let unit: string;
    if (u < US) {
      prec = 0;
      unit = 'ns';
    } else if (u < MS) {
      prec = 3;
      unit = 'µs';
    } else {
      prec = 6;
      unit = 'ms';
    }
    const [frac, rest] = fmtFrac(u, prec);
    out = String(rest) + frac + unit;
  } else {
    const [frac, secs] = fmtFrac(u, 9);
    u = secs;
    out = String(u % 60n) + frac + 's';
    u /= 60n;
    if (u > 0n) {
      out = String(u % 60n) + 'm' + out;
      u /= 60n;
      if (u > 0n) out = String(u) + 'h' + out;
    }
  }
  return neg ? '-' + out : out;
}
