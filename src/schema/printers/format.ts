// Small formatting helpers shared by the table printers: times and ages, label maps and label
// selectors, int-or-string values, container name/image lists. Every function takes objects in
// their JSON form and never throws on missing or malformed fields.

/** Milliseconds since the epoch, or null for an absent, unparsable or zero (year 1) time. */
export function parseTime(value: unknown): number | null {
  if (typeof value !== 'string' || value === '') return null;
  // RFC 3339 with optional fraction (up to nanoseconds) and a Z or ±hh:mm offset.
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:?\d{2})?$/.exec(value);
  if (!m) {
    const t = Date.parse(value);
    return Number.isNaN(t) ? null : t;
  }
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const year = Number(y);
  if (year <= 1 && Number(mo) === 1 && Number(d) === 1 && Number(h) === 0 && Number(mi) === 0 && Number(s) === 0 && !Number(frac ?? '0')) {
    return null; // Go's zero time.Time, which Kubernetes treats as unset
  }
  let ms = Date.UTC(year, Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  if (year < 100) {
    const dt = new Date(ms);
    dt.setUTCFullYear(year);
    ms = dt.getTime();
  }
  if (frac) ms += Number((frac + '000').slice(0, 3));
  if (zone && zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    ms -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4))) * 60_000;
  }
  return ms;
}

/**
 * Kubernetes' short human-readable duration (apimachinery's duration.HumanDuration): about two
 * significant figures, e.g. "5s", "119s", "3m12s", "45m", "5h", "7h30m", "2d3h", "30d", "4y120d".
 * A duration less than two seconds negative (clock skew) reads "0s"; more negative, "<invalid>".
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(ms / 60_000);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(ms / 3_600_000);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.trunc(hours / 24);
    const dy = days % 365;
    return dy === 0 ? `${Math.trunc(days / 365)}y` : `${Math.trunc(days / 365)}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

// A printer's cells depend on the moment of the request only through `ago` (and `since` and
// `age`, which call it): the API server keeps each stored object's Table row with those times in
// it as marks (recordTimes), and a list writes each mark as the duration up to its own moment.
// So a printer never computes with `now` itself, and never looks into what `ago` returned.

/** the times `ago` was asked for while recordTimes runs, or null */
let recording: number[] | null = null;
/** a mark's delimiter: a private-use character and this process's own random text */
export const TIME_MARK = `\uE000${Math.random().toString(36).slice(2, 10)}`;

/** How long before `now` the time `t` (ms since the epoch) was, as the printers show it. */
export function ago(t: number, now: number): string {
  if (recording === null || !Number.isFinite(t)) return humanDuration(now - t);
  recording.push(t);
  return `${TIME_MARK}${recording.length - 1}${TIME_MARK}`;
}

/**
 * `f` run with every `ago` in it written as a mark (TIME_MARK, the index of the time, TIME_MARK)
 * in place of a duration, and the times it was asked for, in the marks' order.
 */
export function recordTimes<T>(f: () => T): { value: T; times: number[] } {
  const outer = recording;
  const times: number[] = [];
  recording = times;
  try {
    return { value: f(), times };
  } finally {
    recording = outer;
  }
}

/** How long ago a timestamp was, as the printers show it; "<unknown>" when the time is unset. */
export function since(value: unknown, now: number): string {
  const t = parseTime(value);
  return t === null ? '<unknown>' : ago(t, now);
}

/** The Age cell: time since metadata.creationTimestamp. */
export function age(obj: any, now: number): string {
  return since(obj?.metadata?.creationTimestamp, now);
}

/** metadata.name, or "" when absent. */
export function nameOf(obj: any): string {
  return str(obj?.metadata?.name);
}

/** RFC 3339 in UTC without fractional seconds, as Go formats time.RFC3339. Zero time for unset. */
export function rfc3339(value: unknown): string {
  const t = parseTime(value);
  if (t === null) return '0001-01-01T00:00:00Z';
  return new Date(Math.floor(t / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
}

/** An integer field: JSON number (or numeric string) to number, otherwise the fallback. */
export function int(v: unknown, fallback = 0): number {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v);
  return fallback;
}

export function arr(v: unknown): any[] {
  return Array.isArray(v) ? v : [];
}

export function obj(v: unknown): Record<string, any> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : {};
}

/** Go's byte-wise string ordering (the default sort of sets.String and sort.Strings). */
export function goCompare(a: string, b: string): number {
  const ba = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  return Buffer.compare(ba, bb);
}

export function goSorted(values: Iterable<string>): string[] {
  return [...values].sort(goCompare);
}

/** labels.FormatLabels: "k1=v1,k2=v2" in key order, or "<none>" for an empty map. */
export function formatLabels(map: unknown): string {
  const m = obj(map);
  const keys = goSorted(Object.keys(m));
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${str(m[k])}`).join(',');
}

/**
 * The string form of a metav1.LabelSelector as a labels.Selector prints it: requirements sorted by
 * key, "k=v" for matchLabels, "k in (a,b)", "k notin (a,b)", "k" (Exists), "!k" (DoesNotExist).
 * Returns null when the selector is invalid (an unknown operator or a wrong number of values).
 * An absent or empty selector gives "".
 */
export function selectorString(selector: unknown): string | null {
  if (selector === undefined || selector === null) return '';
  const sel = obj(selector);
  const reqs: { key: string; text: string }[] = [];
  const ml = obj(sel.matchLabels);
  for (const key of Object.keys(ml)) reqs.push({ key, text: `${key}=${str(ml[key])}` });
  for (const e of arr(sel.matchExpressions)) {
    const key = str(e?.key);
    const values = arr(e?.values).map(str);
    const list = () => (values.length === 1 ? values[0] : goSorted(values).join(','));
    switch (e?.operator) {
      case 'In':
        if (values.length === 0) return null;
        reqs.push({ key, text: `${key} in (${list()})` });
        break;
      case 'NotIn':
        if (values.length === 0) return null;
        reqs.push({ key, text: `${key} notin (${list()})` });
        break;
      case 'Exists':
        if (values.length !== 0) return null;
        reqs.push({ key, text: key });
        break;
      case 'DoesNotExist':
        if (values.length !== 0) return null;
        reqs.push({ key, text: `!${key}` });
        break;
      default:
        return null;
    }
  }
  // Go sorts with sort.Sort(ByKey), which is not stable; keys are unique in practice.
  reqs.sort((a, b) => goCompare(a.key, b.key));
  return reqs.map((r) => r.text).join(',');
}

/** metav1.FormatLabelSelector: the selector string, "<none>" when empty, "<error>" when invalid. */
export function formatLabelSelector(selector: unknown): string {
  const s = selectorString(selector);
  if (s === null) return '<error>';
  return s === '' ? '<none>' : s;
}

/** An int64 field: int(), and a bigint (an integer beyond 2^53) as it is. */
export function int64(v: unknown, fallback = 0): number | bigint {
  return typeof v === 'bigint' ? v : int(v, fallback);
}

/** An IntOrString as its String() prints it. */
export function intOrString(v: unknown): string {
  if (typeof v === 'number') return String(Math.trunc(v));
  if (typeof v === 'bigint') return String(v);
  return str(v);
}

/** The comma-joined container names and images of a pod template, in spec order. */
export function containerCells(containers: unknown): [string, string] {
  const list = arr(containers);
  return [list.map((c) => str(c?.name)).join(','), list.map((c) => str(c?.image)).join(',')];
}

/** The first condition of a type in a conditions list. */
export function findCondition(conditions: unknown, type: string): any | undefined {
  return arr(conditions).find((c) => c?.type === type);
}

/** net.JoinHostPort: brackets around hosts containing a colon (IPv6). */
export function joinHostPort(host: string, port: string | number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A Go-style "%s + N more..." list of at most `max` entries. */
export function listWithMore(list: string[], more: boolean, count: number, max: number, empty = '<unset>'): string {
  const ret = list.join(',');
  if (more) return `${ret} + ${count - max} more...`;
  return ret === '' ? empty : ret;
}
