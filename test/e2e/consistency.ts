// The recorded history of a collection and what every watch and list of it must show: the model
// the watch and list consistency test (watch-consistency.test.ts) checks its records against.
//
// A history is the list of events of a set of objects, in resourceVersion order, each with the
// object as the event carries it (a DELETED event: the object's last state at the deletion's
// resourceVersion). From it: the state at any revision (what an Exact list at it holds), and the
// events a watch from a revision must deliver through a selector (an object entering the
// selection is ADDED, one leaving it is DELETED with its last matching state at the event's
// resourceVersion, as Kubernetes' cacheWatcher converts them).
import { isDeepStrictEqual } from 'node:util';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface HistoryEvent {
  type: EventType;
  rv: number;
  /** namespace/name */
  key: string;
  obj: any;
}

/** what a watch or list selects: the query parameters and the same predicate */
export interface Selector {
  /** the query string parameters ('' for none), already escaped */
  query: string;
  matches(obj: any): boolean;
}

export const everything: Selector = { query: '', matches: () => true };

export function keyOf(obj: any): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}

export function rvOf(obj: any): number {
  return Number(obj?.metadata?.resourceVersion);
}

/** a copy of an object at another resourceVersion (a DELETED event's object) */
export function atRV(obj: any, rv: number): any {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } };
}

/** keys in the order the storage lists them (byte order of their storage keys) */
export function compareKeys(a: string, b: string): number {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return Buffer.compare(x, y);
}

/** the objects at revision rv (the history begins with none), those in scope that sel selects, in list order */
export function stateAt(history: HistoryEvent[], rv: number, sel: Selector = everything, scope?: (key: string) => boolean): any[] {
  const state = new Map<string, any>();
  for (const e of history) {
    if (e.rv > rv) break;
    if (e.type === 'DELETED') state.delete(e.key);
    else state.set(e.key, e.obj);
  }
  return [...state.entries()]
    .filter(([k, o]) => (!scope || scope(k)) && sel.matches(o))
    .sort((a, b) => compareKeys(a[0], b[0]))
    .map(([, o]) => o);
}

/** the events a watch of `sel` from revision `after` delivers, up to revision `upTo` */
export function watchEvents(history: HistoryEvent[], after: number, sel: Selector = everything, scope?: (key: string) => boolean, upTo = Infinity): HistoryEvent[] {
  const last = new Map<string, any>();
  const out: HistoryEvent[] = [];
  for (const e of history) {
    if (e.rv > upTo) break;
    const prev = last.get(e.key);
    if (e.type === 'DELETED') last.delete(e.key);
    else last.set(e.key, e.obj);
    if (e.rv <= after || (scope && !scope(e.key))) continue;
    const now = e.type === 'DELETED' ? false : sel.matches(e.obj);
    const before = prev !== undefined && sel.matches(prev);
    if (e.type === 'DELETED') {
      if (before) out.push(e);
    } else if (now && before) out.push(e);
    else if (now) out.push({ ...e, type: 'ADDED' });
    else if (before) out.push({ type: 'DELETED', rv: e.rv, key: e.key, obj: atRV(prev, e.rv) });
  }
  return out;
}

/** one line of a watch stream as the client parsed it */
export interface WireEvent {
  type: string;
  object: any;
}

/**
 * Differences between the events a watch delivered (after its initial state) and the ones it
 * must deliver, as lines a person can read; [] when they agree. Each event is compared by type,
 * resourceVersion and object.
 */
export function compareEvents(got: WireEvent[], want: HistoryEvent[], scope?: (key: string) => boolean): string[] {
  const mine = got.filter((e) => e.type !== 'BOOKMARK' && (!scope || scope(keyOf(e.object))));
  const out: string[] = [];
  const n = Math.max(mine.length, want.length);
  for (let i = 0; i < n && out.length < 5; i++) {
    const g = mine[i];
    const w = want[i];
    if (!g) out.push(`missing event ${i}: ${w!.type} ${w!.key}@${w!.rv}`);
    else if (!w) out.push(`extra event ${i}: ${g.type} ${keyOf(g.object)}@${rvOf(g.object)}`);
    else if (g.type !== w.type || keyOf(g.object) !== w.key || rvOf(g.object) !== w.rv) out.push(`event ${i}: got ${g.type} ${keyOf(g.object)}@${rvOf(g.object)}, want ${w.type} ${w.key}@${w.rv}`);
    else if (!isDeepStrictEqual(g.object, w.obj)) out.push(`event ${i} (${g.type} ${w.key}@${w.rv}): object ${JSON.stringify(g.object).slice(0, 300)}, want ${JSON.stringify(w.obj).slice(0, 300)}`);
  }
  if (out.length === 5 && n > 5) out.push(`(${mine.length} events, ${want.length} expected)`);
  return out;
}

/** an object as a list item carries it: without kind and apiVersion, which only the list says */
export function asItem(o: any): any {
  const { kind: _k, apiVersion: _a, ...rest } = o;
  return rest;
}

/** differences between listed objects and the state they must be, as lines; [] when they agree (kind and apiVersion aside) */
export function compareItems(got: any[], want: any[]): string[] {
  const out: string[] = [];
  const g = got.map((o) => `${keyOf(o)}@${rvOf(o)}`);
  const w = want.map((o) => `${keyOf(o)}@${rvOf(o)}`);
  if (g.join(' ') !== w.join(' ')) {
    const extra = g.filter((x) => !w.includes(x));
    const missing = w.filter((x) => !g.includes(x));
    out.push(`${got.length} items, want ${want.length}; extra [${extra.slice(0, 5).join(' ')}] missing [${missing.slice(0, 5).join(' ')}]${!extra.length && !missing.length ? ' (order differs)' : ''}`);
    return out;
  }
  for (let i = 0; i < got.length; i++) {
    if (!isDeepStrictEqual(asItem(got[i]), asItem(want[i]))) {
      out.push(`item ${g[i]}: ${JSON.stringify(got[i]).slice(0, 300)}, want ${JSON.stringify(want[i]).slice(0, 300)}`);
      break;
    }
  }
  return out;
}

/**
 * A watch that began with its initial state (resourceVersion unset or "0", or a streaming list):
 * the leading ADDED events are the state at some revision X and the rest the events after X.
 * `initialEnd` is X when the stream said it (the initial-events-end bookmark). Returns the
 * revision X that explains the stream and how many events were the initial state, or the
 * differences found for the likeliest split.
 */
export function explainInitial(history: HistoryEvent[], events: WireEvent[], sel: Selector, scope: ((key: string) => boolean) | undefined, initialEnd: number | undefined, upTo = Infinity): { x: number; count: number; problems: string[] } {
  const real = events.filter((e) => e.type !== 'BOOKMARK' && e.type !== 'ERROR');
  const inScope = (e: WireEvent) => !scope || scope(keyOf(e.object));
  const tryAt = (x: number, count: number): string[] => {
    const initial = real.slice(0, count).filter(inScope).map((e) => e.object);
    const p = compareItems(initial, stateAt(history, x, sel, scope)).map((s) => `initial state at ${x}: ${s}`);
    if (p.length) return p;
    return compareEvents(real.slice(count), watchEvents(history, x, sel, scope, upTo), scope).map((s) => `after the initial state at ${x}: ${s}`);
  };
  if (initialEnd !== undefined) {
    const end = events.findIndex(isInitialEnd);
    const count = events.slice(0, end).filter((e) => e.type !== 'BOOKMARK' && e.type !== 'ERROR').length;
    return { x: initialEnd, count, problems: tryAt(initialEnd, count) };
  }
  let leading = 0;
  while (leading < real.length && real[leading]!.type === 'ADDED') leading++;
  let first: string[] | undefined;
  for (let count = leading; count >= 0; count--) {
    const next = real[count];
    const x = next ? rvOf(next.object) - 1 : history.length ? Math.min(upTo, history[history.length - 1]!.rv) : 0;
    const p = tryAt(x, count);
    if (!p.length) return { x, count, problems: [] };
    first ??= p;
  }
  return { x: 0, count: leading, problems: first ?? [] };
}

/**
 * Differences in order: events after the initial state must come in strictly increasing
 * resourceVersion, a bookmark at no lower one than the event before it, no event at or below a
 * bookmark's; returns the first few as lines.
 */
export function orderProblems(events: WireEvent[], skipInitial: number): string[] {
  const out: string[] = [];
  let last = 0;
  let lastWasBookmark = false;
  let real = 0;
  for (const e of events) {
    if (e.type === 'ERROR') {
      out.push(`an ERROR event: ${JSON.stringify(e.object).slice(0, 200)}`);
      continue;
    }
    const rv = rvOf(e.object);
    if (e.type !== 'BOOKMARK' && real++ < skipInitial) continue;
    if (e.type === 'BOOKMARK') {
      if (rv < last) out.push(`a bookmark at ${rv} after an event at ${last}`);
    } else if (rv <= last) out.push(`${e.type} ${keyOf(e.object)} at ${rv} after ${lastWasBookmark ? 'a bookmark' : 'an event'} at ${last}`);
    lastWasBookmark = e.type === 'BOOKMARK';
    last = Math.max(last, rv);
    if (out.length >= 5) break;
  }
  return out;
}

/** the bookmark that ends a streaming list's initial events */
export function isInitialEnd(e: WireEvent): boolean {
  return e.type === 'BOOKMARK' && e.object?.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true';
}

/** the resourceVersion of a stream's initial-events-end bookmark (undefined: none yet) */
export function initialEnd(events: WireEvent[]): number | undefined {
  const b = events.find(isInitialEnd);
  return b ? rvOf(b.object) : undefined;
}

/**
 * The resourceVersion a watch resumes from: the highest of an event or bookmark it received, or
 * `from` (the initial events of a watch that began with them do not count: they are not in order)
 */
export function lastRV(events: WireEvent[], from: number, initialEvents: boolean): number {
  let rv = from;
  let initialDone = !initialEvents;
  for (const e of events) {
    if (e.type === 'ERROR') continue;
    if (e.type === 'BOOKMARK') {
      if (isInitialEnd(e)) initialDone = true;
      rv = Math.max(rv, rvOf(e.object));
    } else if (initialDone) rv = Math.max(rv, rvOf(e.object));
  }
  return rv;
}
