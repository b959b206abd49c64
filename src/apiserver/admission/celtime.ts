// CEL's timestamp and duration types (google.protobuf.Timestamp and Duration) for Keelson's CEL
// interpreter (cel.ts): timestamp() and duration() from strings as cel-go parses them (RFC 3339;
// Go's time.ParseDuration), their arithmetic and comparisons, string() and int() of them, and the
// accessors (getFullYear ... getMilliseconds, with an optional time zone for a timestamp). Both
// hold nanoseconds as a bigint: a timestamp since the Unix epoch, from year 1 to 9999 as cel-go
// allows; a duration within int64 nanoseconds, as Go's time.Duration.

export class CelTimestamp {
  constructor(readonly ns: bigint) {}
}

export class CelDuration {
  constructor(readonly ns: bigint) {}
}

const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;
/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999999Z, cel-go's bounds */
const MIN_TS = -62135596800n * NS_PER_S;
const MAX_TS = 253402300799n * NS_PER_S + 999_999_999n;
const MAX_I64 = (1n << 63n) - 1n;
const MIN_I64 = -(1n << 63n);

/** a / b rounded toward negative infinity */
export function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

export function timestampOf(ns: bigint, err: (m: string) => Error): CelTimestamp {
  if (ns < MIN_TS || ns > MAX_TS) throw err('timestamp out of range');
  return new CelTimestamp(ns);
}

export function durationOf(ns: bigint, err: (m: string) => Error): CelDuration {
  if (ns < MIN_I64 || ns > MAX_I64) throw err('duration out of range');
  return new CelDuration(ns);
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** an RFC 3339 timestamp (Go's time.Parse with time.RFC3339), or undefined */
export function parseTimestamp(s: string): bigint | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [y, mo, d, h, mi, se] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i]));
  if (mo! < 1 || mo! > 12 || d! < 1 || d! > daysIn(y!, mo!) || h! > 23 || mi! > 59 || se! > 59) return undefined;
  let off = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    off = (oh * 60 + om) * (m[9] === '-' ? -1 : 1);
  }
  const secs = BigInt(Math.floor(Date.UTC(y!, mo! - 1, d!, h!, mi!, se!) / 1000)) - BigInt(off * 60);
  // (Date.UTC maps years 0-99 to 1900-1999)
  const fixed = y! < 100 ? secs + yearShift(y!) : secs;
  const frac = m[7] ? BigInt(m[7].padEnd(9, '0')) : 0n;
  return fixed * NS_PER_S + frac;
}

function yearShift(y: number): bigint {
  const wrong = Date.UTC(1900 + y, 0, 1);
  const d = new Date(0);
  d.setUTCFullYear(y, 0, 1);
  return BigInt(Math.round((d.getTime() - wrong) / 1000));
}

function daysIn(y: number, m: number): number {
  return [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]!;
}

/** a `date` (2006-01-02) as a timestamp at midnight UTC, or undefined */
export function parseDate(s: string): bigint | undefined {
  return /^\d{4}-\d{2}-\d{2}$/.test(s) ? parseTimestamp(`${s}T00:00:00Z`) : undefined;
}

const UNITS: Record<string, bigint> = { ns: 1n, us: 1000n, 'µs': 1000n, 'μs': 1000n, ms: NS_PER_MS, s: NS_PER_S, m: 60n * NS_PER_S, h: 3600n * NS_PER_S };

/** Go's time.ParseDuration, in nanoseconds, or undefined */
export function parseDuration(s: string): bigint | undefined {
  let i = 0;
  let neg = false;
  if (s[0] === '-' || s[0] === '+') {
    neg = s[0] === '-';
    i = 1;
  }
  if (s.slice(i) === '0') return 0n;
  if (i >= s.length) return undefined;
  let total = 0n;
  while (i < s.length) {
    const num = /^(\d*)(?:\.(\d*))?/.exec(s.slice(i))!;
    if (num[0] === '' || num[0] === '.' || (num[1] === '' && (num[2] ?? '') === '')) return undefined;
    i += num[0].length;
    const unit = /^[^\d.]+/.exec(s.slice(i));
    if (!unit) return undefined;
    const u = UNITS[unit[0]];
    if (u === undefined) return undefined;
    i += unit[0].length;
    const whole = BigInt(num[1] || '0') * u;
    const fracDigits = num[2] ?? '';
    const frac = fracDigits ? (BigInt(fracDigits) * u) / 10n ** BigInt(fracDigits.length) : 0n;
    total += whole + frac;
    if (total > MAX_I64 + (neg ? 1n : 0n)) return undefined;
  }
  return neg ? -total : total;
}

/** RFC 3339 with nanoseconds, trailing zeros trimmed, in UTC (Go's time.RFC3339Nano) */
export function formatTimestamp(ns: bigint): string {
  const secs = floorDiv(ns, NS_PER_S);
  const frac = ns - secs * NS_PER_S;
  const d = new Date(Number(secs) * 1000);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const f = frac === 0n ? '' : `.${frac.toString().padStart(9, '0').replace(/0+$/, '')}`;
  return `${p(d.getUTCFullYear(), 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}T${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}${f}Z`;
}

/** seconds with an `s`, as cel-go writes a duration (strconv.FormatFloat of the seconds, shortest form) */
export function formatDuration(ns: bigint): string {
  return `${Number(ns) / 1e9}s`;
}

/** the calendar fields of an instant in a time zone: an IANA name, `UTC`, or a fixed `±HH:MM` offset */
function fieldsIn(ns: bigint, tz: string | undefined, err: (m: string) => Error): { y: number; mo: number; d: number; h: number; mi: number; s: number; ms: number; dow: number; doy: number } {
  let ms = Number(floorDiv(ns, NS_PER_MS));
  const msPart = Number(floorDiv(ns, NS_PER_MS) - floorDiv(ns, NS_PER_S) * 1000n);
  let zone = 'UTC';
  if (tz !== undefined && tz !== '' && tz !== 'UTC') {
    const off = /^([+-])(\d{2}):(\d{2})$/.exec(tz);
    if (off) ms += (Number(off[2]) * 60 + Number(off[3])) * 60_000 * (off[1] === '-' ? -1 : 1);
    else zone = tz;
  }
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', weekday: 'short' }).formatToParts(new Date(ms));
  } catch {
    throw err(`unknown time zone ${tz}`);
  }
  const get = (t: string) => parts.find((x) => x.type === t)?.value ?? '';
  const y = Number(get('year'));
  const mo = Number(get('month'));
  const d = Number(get('day'));
  const dow = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(get('weekday'));
  let doy = d - 1;
  for (let m = 1; m < mo; m++) doy += daysIn(y, m);
  return { y, mo, d, h: Number(get('hour')), mi: Number(get('minute')), s: Number(get('second')), ms: msPart, dow, doy };
}

/** a timestamp's or a duration's accessor method, or undefined when `fn` is not one */
export function timeMethod(fn: string, t: CelTimestamp | CelDuration, args: unknown[], err: (m: string) => Error): bigint | undefined {
  if (t instanceof CelDuration) {
    if (args.length !== 0) return undefined;
    switch (fn) {
      case 'getHours':
        return t.ns / (3600n * NS_PER_S);
      case 'getMinutes':
        return t.ns / (60n * NS_PER_S);
      case 'getSeconds':
        return t.ns / NS_PER_S;
      case 'getMilliseconds':
        return t.ns / NS_PER_MS;
    }
    return undefined;
  }
  if (args.length > 1 || (args.length === 1 && typeof args[0] !== 'string')) return undefined;
  const names = ['getFullYear', 'getMonth', 'getDate', 'getDayOfMonth', 'getDayOfWeek', 'getDayOfYear', 'getHours', 'getMinutes', 'getSeconds', 'getMilliseconds'];
  if (!names.includes(fn)) return undefined;
  const f = fieldsIn(t.ns, args[0] as string | undefined, err);
  switch (fn) {
    case 'getFullYear':
      return BigInt(f.y);
    case 'getMonth':
      return BigInt(f.mo - 1);
    case 'getDate':
      return BigInt(f.d);
    case 'getDayOfMonth':
      return BigInt(f.d - 1);
    case 'getDayOfWeek':
      return BigInt(f.dow);
    case 'getDayOfYear':
      return BigInt(f.doy);
    case 'getHours':
      return BigInt(f.h);
    case 'getMinutes':
      return BigInt(f.mi);
    case 'getSeconds':
      return BigInt(f.s);
    default:
      return BigInt(f.ms);
  }
}
