// Watch and list consistency under concurrent writes, on the sqlite and the memory backend.
//
// Writers create, replace (with and without resourceVersion), patch (merge, strategic, apply) and
// delete ConfigMaps in three namespaces (some held by a finalizer that is removed later, some
// deleted with a grace period, which a ConfigMap does not have: they go at once), moving them in
// and out of a label selector, and record every answer. Meanwhile watches start at different
// points (resourceVersion unset, "0", a recent one, the start; streaming lists with the
// initial-events-end bookmark), with and without label and field selectors, some closed (or
// timed out by the server) and resumed from the last resourceVersion they saw; paged lists (limit
// 1..7), Exact, NotOlderThan and resourceVersion=0 lists at resourceVersions seen before. Nothing
// is asserted while it runs: the records are checked afterwards against the history
// (consistency.ts), which an unselective watch from the start delivered and the writers' answers
// confirm event by event. On sqlite the server is then stopped with SIGTERM and started again on
// the same data directory, twice: once quiet, once while the writers write.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type http2 from 'node:http2';
import { isDeepStrictEqual } from 'node:util';
import { startCluster, NO_CA_PUBLISHER, type Cluster, type RawResponse, type Stream } from './harness.js';
import {
  atRV,
  compareEvents,
  compareItems,
  everything,
  explainInitial,
  initialEnd,
  keyOf,
  lastRV,
  orderProblems,
  rvOf,
  stateAt,
  watchEvents,
  type EventType,
  type HistoryEvent,
  type Selector,
  type WireEvent,
} from './consistency.js';

const NSS = ['wc-0', 'wc-1', 'wc-2'];
/** the namespace of the closing write every all-namespaces watch waits for */
const END_NS = 'wc-end';
const RUN_MS = 10_000;
const WRITERS = 4;
const NAMES_PER_NS = 4;
const FINALIZER = 'consistency.keelson.test/hold';
const ours = (key: string) => NSS.includes(key.slice(0, key.indexOf('/')));
/** the keys a watch or list of a namespace (or of all, then only ours) holds */
const scopeOf = (ns: string | undefined) => (ns ? (key: string) => key.startsWith(`${ns}/`) : ours);

const SELECTORS: Record<string, Selector> = {
  all: everything,
  in: { query: 'labelSelector=sel%3Din', matches: (o) => o.metadata.labels?.sel === 'in' },
  notIn: { query: 'labelSelector=sel%21%3Din', matches: (o) => o.metadata.labels?.sel !== 'in' },
  inOrOut: { query: `labelSelector=${encodeURIComponent('sel in (in,out)')}`, matches: (o) => ['in', 'out'].includes(o.metadata.labels?.sel) },
  unlabelled: { query: `labelSelector=${encodeURIComponent('!sel')}`, matches: (o) => o.metadata.labels?.sel === undefined },
  name: { query: 'fieldSelector=metadata.name%3Do1-0', matches: (o) => o.metadata.name === 'o1-0' },
  inButNot: { query: 'labelSelector=sel%3Din&fieldSelector=metadata.name%21%3Do0-0', matches: (o) => o.metadata.labels?.sel === 'in' && o.metadata.name !== 'o0-0' },
  notWc1: { query: 'fieldSelector=metadata.namespace%21%3Dwc-1', matches: (o) => o.metadata.namespace !== 'wc-1' },
};

function random(seed: number) {
  let s = seed;
  const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  return { rnd, pick: <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]! };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const collection = (ns?: string) => (ns ? `/api/v1/namespaces/${ns}/configmaps` : '/api/v1/configmaps');

/** a write as its writer was answered: DELETED writes have no resourceVersion (the answer does not say it) */
interface Write {
  key: string;
  type: EventType;
  rv?: number;
  obj?: any;
  what: string;
}

/** a watch and the segments it was resumed in */
interface WatchPlan {
  name: string;
  ns?: string;
  sel: Selector;
  /** 'rv': from `rv`; the others start with the initial state */
  start: 'unset' | 'zero' | 'rv' | 'stream';
  rv?: number;
  bookmarks: boolean;
  /** the server ends each segment after this long (the watch is resumed when it does) */
  timeoutSeconds?: number;
  /** as a stream of the run's HTTP/2 session (client-go's way), not a request of its own over HTTP/1.1 */
  http2?: boolean;
  /** the revision every write acknowledged before the watch was sent had (a consistent start must reach it) */
  minRV: number;
  segments: { log: Stream; path: string; from: number; lastRV?: number }[];
}

interface ListRecord {
  name: string;
  ns?: string;
  sel: Selector;
  /** latest: no resourceVersion (a consistent read); any: resourceVersion 0; pagedAt: resourceVersion and limit (Exact) */
  mode: 'latest' | 'any' | 'exact' | 'notOlder' | 'pagedAt';
  rv?: number;
  limit?: number;
  minRV: number;
  pages: RawResponse[];
}

class Run {
  readonly writes: Write[] = [];
  readonly problems: string[] = [];
  readonly watches: WatchPlan[] = [];
  readonly lists: ListRecord[] = [];
  /** every resourceVersion a write was answered, in the order answered */
  readonly answered: number[] = [];
  maxAnswered = 0;
  stopped = false;

  /** the one HTTP/2 connection the http2 watches share, as client-go's watches of one client do */
  readonly h2: http2.ClientHttp2Session;

  constructor(readonly c: Cluster) {
    this.h2 = c.http2Session();
    this.h2.on('error', () => {});
  }

  /** close every watch and the HTTP/2 session */
  closeAll(): void {
    for (const p of this.watches) for (const s of p.segments) s.log.close();
    this.h2.close();
  }

  record(key: string, type: EventType, r: RawResponse | undefined, what: string): void {
    if (type === 'DELETED') {
      this.writes.push({ key, type, what });
      return;
    }
    const obj = r!.json();
    const rv = rvOf(obj);
    this.writes.push({ key, type, rv, obj, what });
    this.answered.push(rv);
    if (rv > this.maxAnswered) this.maxAnswered = rv;
  }

  /** a SIGTERM was sent: a request that fails leaves its object's state unknown, and is no problem */
  terminating = false;
  /** the objects a write was in flight for when the server stopped (shared: all the shared ones) */
  readonly uncertain = new Set<string>();

  unexpected(what: string, r: RawResponse, key: string): void {
    if (this.terminating) this.unknown(key);
    else this.problems.push(`${what}: ${r.status} ${r.text.slice(0, 300)}`);
  }

  unknown(key: string): void {
    for (const k of key === 'shared' ? SHARED.map((n) => `wc-0/${n}`) : [key]) this.uncertain.add(k);
  }

  watch(plan: Omit<WatchPlan, 'segments' | 'minRV'>): WatchPlan {
    const p: WatchPlan = { ...plan, minRV: this.maxAnswered, segments: [] };
    this.watches.push(p);
    this.openSegment(p, plan.start === 'rv' ? plan.rv! : 0);
    return p;
  }

  openSegment(p: WatchPlan, from: number): Stream {
    const q = ['watch=1'];
    if (p.sel.query) q.push(p.sel.query);
    if (p.segments.length > 0 || p.start === 'rv') q.push(`resourceVersion=${from}`);
    else if (p.start === 'zero') q.push('resourceVersion=0');
    else if (p.start === 'stream') {
      q.push('sendInitialEvents=true', 'resourceVersionMatch=NotOlderThan');
      // a streaming list not older than a resourceVersion
      if (p.rv) q.push(`resourceVersion=${p.rv}`);
    }
    if (p.bookmarks) q.push('allowWatchBookmarks=true');
    if (p.timeoutSeconds) q.push(`timeoutSeconds=${p.timeoutSeconds}`);
    const path = `${collection(p.ns)}?${q.join('&')}`;
    const log = this.c.stream(path, {}, p.http2 ? this.h2 : undefined);
    p.segments.push({ log, path, from });
    return log;
  }

  /** close the newest segment and go on from the last resourceVersion it saw */
  resume(p: WatchPlan): void {
    const seg = p.segments[p.segments.length - 1]!;
    const initial = p.segments.length === 1 && p.start !== 'rv';
    seg.log.close();
    seg.lastRV = lastRV(seg.log.events(), seg.from, initial);
    this.openSegment(p, seg.lastRV);
  }
}

// ---- writers ----

function configMap(ns: string, name: string, labels: Record<string, string>, data: Record<string, string>, finalizers?: string[]): any {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels, ...(finalizers ? { finalizers } : {}) }, data };
}

/** one writer of its own objects (o<w>-<i> in every namespace) and of the shared ones; `initial`: the objects as they are */
async function writer(run: Run, w: number, initial = new Map<string, any>()): Promise<void> {
  const c = run.c;
  const { rnd, pick } = random(1000 + w);
  const keys: { ns: string; name: string }[] = [];
  for (const ns of NSS) for (let i = 0; i < NAMES_PER_NS; i++) keys.push({ ns, name: `o${w}-${i}` });
  const cur = new Map<string, any>(initial);
  const prevRV = new Map<string, string>();
  const labels = () => {
    const sel = pick(['in', 'out', undefined, 'in']);
    return { owner: `w${w}`, ...(sel ? { sel } : {}) };
  };
  let seq = 0;
  const JSON_MERGE = { 'content-type': 'application/merge-patch+json' };
  const STRATEGIC = { 'content-type': 'application/strategic-merge-patch+json' };
  const APPLY = { 'content-type': 'application/apply-patch+yaml' };
  let key = '';
  while (!run.stopped) {
    try {
      await step();
    } catch (e) {
      // the server stopped (connection refused or reset): what this write did is not known
      if (!run.terminating) throw e;
      run.unknown(key);
      return;
    }
  }
  async function step(): Promise<void> {
    seq++;
    if (rnd() < 0.1) {
      key = 'shared';
      return sharedWrite(run, w, seq, pick);
    }
    const { ns, name } = pick(keys);
    key = `${ns}/${name}`;
    const path = `${collection(ns)}/${name}`;
    const o = cur.get(key);
    const v = `${w}-${seq}`;
    const done = (type: EventType, r: RawResponse, what: string, codes: number[]) => {
      if (!codes.includes(r.status)) {
        run.unexpected(`${what} ${key}`, r, key);
        // the writer no longer knows the key's state: it stops writing it
        keys.splice(keys.findIndex((k) => k.ns === ns && k.name === name), 1);
        return;
      }
      run.record(key, type, r, what);
      if (o) prevRV.set(key, o.metadata.resourceVersion);
      if (type === 'DELETED') cur.delete(key);
      else cur.set(key, r.json());
    };
    if (!o) {
      if (rnd() < 0.7) {
        const fin = rnd() < 0.35 ? [FINALIZER] : undefined;
        done('ADDED', await c.raw('POST', collection(ns), { body: configMap(ns, name, labels(), { v }, fin) }), 'create', [201]);
      } else {
        const body = configMap(ns, name, labels(), { v, applied: 'yes' });
        done('ADDED', await c.raw('PATCH', `${path}?fieldManager=w${w}&force=true`, { headers: APPLY, body: JSON.stringify(body) }), 'apply (create)', [201]);
      }
      return;
    }
    const terminating = !!o.metadata.deletionTimestamp;
    if (terminating) {
      const op = pick(['patch', 'release', 'releasePut']);
      if (op === 'patch') done('MODIFIED', await c.raw('PATCH', path, { headers: JSON_MERGE, body: { data: { v } } }), 'merge patch (terminating)', [200]);
      else if (op === 'release') done('DELETED', await c.raw('PATCH', path, { headers: JSON_MERGE, body: { metadata: { finalizers: null } } }), 'finalizer removed by patch', [200]);
      else {
        const body = { ...o, metadata: { ...o.metadata, finalizers: [] } };
        done('DELETED', await c.raw('PUT', path, { body }), 'finalizer removed by update', [200]);
      }
      return;
    }
    const held = (o.metadata.finalizers ?? []).length > 0;
    const op = pick(['put', 'putNoRV', 'merge', 'strategic', 'apply', 'relabel', 'delete', 'deleteGrace', 'deletePrecondition', 'stale']);
    switch (op) {
      case 'put': {
        const body = { ...o, metadata: { ...o.metadata, labels: labels() }, data: { ...o.data, v } };
        done('MODIFIED', await c.raw('PUT', path, { body }), 'update', [200]);
        break;
      }
      case 'putNoRV': {
        const { resourceVersion: _, ...meta } = o.metadata;
        done('MODIFIED', await c.raw('PUT', path, { body: { ...o, metadata: meta, data: { v } } }), 'update without resourceVersion', [200]);
        break;
      }
      case 'merge':
        done('MODIFIED', await c.raw('PATCH', path, { headers: JSON_MERGE, body: { data: { v, [`m${seq % 3}`]: v } } }), 'merge patch', [200]);
        break;
      case 'strategic':
        done('MODIFIED', await c.raw('PATCH', path, { headers: STRATEGIC, body: { metadata: { labels: { sel: pick(['in', 'out']) } }, data: { v } } }), 'strategic merge patch', [200]);
        break;
      case 'apply': {
        const body = configMap(ns, name, labels(), { v, applied: 'yes' });
        done('MODIFIED', await c.raw('PATCH', `${path}?fieldManager=w${w}&force=true`, { headers: APPLY, body: JSON.stringify(body) }), 'apply', [200]);
        break;
      }
      case 'relabel':
        done('MODIFIED', await c.raw('PATCH', path, { headers: JSON_MERGE, body: { metadata: { labels: { sel: pick(['in', 'out', null]) } }, data: { v } } }), 'relabel', [200]);
        break;
      case 'delete':
      case 'deleteGrace':
      case 'deletePrecondition': {
        const q = op === 'deleteGrace' ? '?gracePeriodSeconds=30' : '';
        const body = op === 'deletePrecondition' ? { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion } } : undefined;
        const r = await c.raw('DELETE', path + q, body ? { body } : {});
        if (held) done('MODIFIED', r, `${op} (held by a finalizer)`, [200]);
        else if (r.status === 200 && r.json().kind !== 'Status') run.unexpected(`${op} ${key} answered the object, not a Status`, r, key);
        else done('DELETED', r, op, [200]);
        break;
      }
      case 'stale': {
        // an update at a resourceVersion the key had before: 409, and no write
        const old = prevRV.get(key);
        if (!old) break;
        const r = await c.raw('PUT', path, { body: { ...o, metadata: { ...o.metadata, resourceVersion: old }, data: { v } } });
        if (r.status !== 409) run.unexpected(`update of ${key} at the stale resourceVersion ${old}`, r, key);
        break;
      }
    }
  }
}

/** ConfigMaps every writer writes: shared-0..2 in wc-0, never deleted */
const SHARED = ['shared-0', 'shared-1', 'shared-2'];

async function sharedWrite(run: Run, w: number, seq: number, pick: <T>(xs: readonly T[]) => T): Promise<void> {
  const c = run.c;
  const name = pick(SHARED);
  const key = `wc-0/${name}`;
  const path = `${collection('wc-0')}/${name}`;
  const v = `${w}-${seq}`;
  const op = pick(['merge', 'putNoRV', 'put', 'strategic']);
  if (op === 'merge') {
    const r = await c.raw('PATCH', path, { headers: { 'content-type': 'application/merge-patch+json' }, body: { data: { [`w${w}`]: v } } });
    if (r.status === 200) run.record(key, 'MODIFIED', r, 'shared merge patch');
    else run.unexpected(`shared merge patch ${key}`, r, key);
    return;
  }
  if (op === 'strategic') {
    const r = await c.raw('PATCH', path, { headers: { 'content-type': 'application/strategic-merge-patch+json' }, body: { metadata: { labels: { sel: pick(['in', 'out']) } }, data: { [`w${w}`]: v } } });
    if (r.status === 200) run.record(key, 'MODIFIED', r, 'shared strategic patch');
    else run.unexpected(`shared strategic patch ${key}`, r, key);
    return;
  }
  const g = await c.raw('GET', path);
  if (g.status !== 200) return run.unexpected(`get ${key}`, g, key);
  const o = g.json();
  if (op === 'putNoRV') {
    const { resourceVersion: _, ...meta } = o.metadata;
    const r = await c.raw('PUT', path, { body: { ...o, metadata: meta, data: { ...o.data, [`w${w}`]: v } } });
    if (r.status === 200) run.record(key, 'MODIFIED', r, 'shared update without resourceVersion');
    else run.unexpected(`shared update without resourceVersion ${key}`, r, key);
    return;
  }
  // at the resourceVersion read: another writer may have written in between (409)
  const r = await c.raw('PUT', path, { body: { ...o, data: { ...o.data, [`w${w}`]: v } } });
  if (r.status === 200) run.record(key, 'MODIFIED', r, 'shared update');
  else if (r.status !== 409) run.unexpected(`shared update ${key}`, r, key);
}

// ---- lists ----

async function lister(run: Run, seed: number): Promise<void> {
  const { rnd, pick } = random(seed);
  const c = run.c;
  while (!run.stopped) {
    const mode = pick(['latest', 'latest', 'exact', 'notOlder', 'pagedAt', 'any'] as const);
    const ns = rnd() < 0.75 ? pick(NSS) : undefined;
    const sel = pick([SELECTORS.all!, SELECTORS.all!, SELECTORS.in!, SELECTORS.notIn!, SELECTORS.inOrOut!]);
    // the start, a resourceVersion a write was answered, or the one before it (maybe another collection's write)
    const rv = run.answered.length === 0 || rnd() < 0.15 ? run.watches[0]!.rv! : pick(run.answered) - (rnd() < 0.3 ? 1 : 0);
    const limit = mode === 'latest' || mode === 'pagedAt' ? 1 + Math.floor(rnd() * 7) : undefined;
    const rec: ListRecord = { name: `${mode} ${collection(ns)} ${sel.query}`, ns, sel, mode, minRV: run.maxAnswered, pages: [] };
    const q: string[] = [];
    if (sel.query) q.push(sel.query);
    if (limit) q.push(`limit=${limit}`);
    if (mode === 'exact') q.push(`resourceVersion=${rv}`, 'resourceVersionMatch=Exact');
    if (mode === 'notOlder') q.push(`resourceVersion=${rv}`, 'resourceVersionMatch=NotOlderThan');
    if (mode === 'pagedAt') q.push(`resourceVersion=${rv}`);
    if (mode === 'any') q.push('resourceVersion=0');
    if (mode !== 'latest' && mode !== 'any') rec.rv = rv;
    rec.limit = limit;
    run.lists.push(rec);
    let r = await c.raw('GET', `${collection(ns)}?${q.join('&')}`);
    rec.pages.push(r);
    for (;;) {
      if (r.status !== 200) break;
      const cont = r.json().metadata.continue;
      if (!cont) break;
      const next = [...(sel.query ? [sel.query] : []), `limit=${limit}`, `continue=${encodeURIComponent(cont)}`];
      r = await c.raw('GET', `${collection(ns)}?${next.join('&')}`);
      rec.pages.push(r);
    }
  }
}

function checkList(run: Run, history: HistoryEvent[], l: ListRecord): void {
  const scope = scopeOf(l.ns);
  const p = (s: string): void => void run.problems.push(`list ${l.name}${l.rv ? ` at ${l.rv}` : ''}${l.limit ? ` limit ${l.limit}` : ''}: ${s}`);
  const pages = l.pages;
  if (pages.some((r) => r.status !== 200)) return p(`a page answered ${pages.find((r) => r.status !== 200)!.status}: ${pages.find((r) => r.status !== 200)!.text.slice(0, 300)}`);
  const bodies = pages.map((r) => r.json());
  const rv = Number(bodies[0].metadata.resourceVersion);
  for (const b of bodies) if (Number(b.metadata.resourceVersion) !== rv) return p(`a page at ${b.metadata.resourceVersion}, the first at ${rv}`);
  if (l.mode === 'exact' || l.mode === 'pagedAt') {
    if (rv !== l.rv) return p(`answered at ${rv}`);
  } else if (l.mode === 'notOlder') {
    if (rv < l.rv!) return p(`answered at ${rv}, older than asked`);
  } else if (l.mode === 'latest' && rv < l.minRV) return p(`answered at ${rv}, before ${l.minRV}, a write acknowledged before the list was sent`);
  const want = stateAt(history, rv, l.sel, scope);
  const items = bodies.flatMap((b) => b.items).filter((o: any) => scope(keyOf(o)));
  for (const s of compareItems(items, want)) p(`${pages.length} pages at ${rv}: ${s}`);
  // every page but the last is full when nothing filters, and says how many items follow it
  let seen = 0;
  for (let i = 0; i < bodies.length; i++) {
    const b = bodies[i];
    seen += b.items.length;
    const last = i === bodies.length - 1;
    if (last && b.metadata.continue) p(`the last page has a continue token`);
    if (!l.limit) continue;
    if (b.items.length > l.limit) p(`page ${i} holds ${b.items.length} items, over the limit`);
    if (l.sel === everything && l.ns) {
      if (!last && b.items.length !== l.limit) p(`page ${i} holds ${b.items.length} items of ${l.limit}`);
      const remaining = last ? undefined : want.length - seen;
      if (b.metadata.remainingItemCount !== remaining) p(`page ${i}: remainingItemCount ${b.metadata.remainingItemCount}, want ${remaining}`);
    } else if (l.sel !== everything && b.metadata.remainingItemCount !== undefined) p(`page ${i}: remainingItemCount with a selector`);
  }
}

// ---- the reference history ----

/**
 * The history of our namespaces as an unselective watch from the start delivered it, checked
 * against the writers' answers: per object, the events in the order its writes were answered,
 * each answered resourceVersion once with its type and object, each deletion once, with the
 * object's last state at a resourceVersion after its last write.
 */
function historyFrom(run: Run, ref: Stream): HistoryEvent[] {
  const history: HistoryEvent[] = ref
    .events()
    .filter((e) => e.type !== 'BOOKMARK' && e.type !== 'ERROR' && ours(keyOf(e.object)))
    .map((e) => ({ type: e.type as EventType, rv: rvOf(e.object), key: keyOf(e.object), obj: e.object }));
  const byKey = new Map<string, HistoryEvent[]>();
  for (const e of history) {
    let l = byKey.get(e.key);
    if (!l) byKey.set(e.key, (l = []));
    l.push(e);
  }
  const writesByKey = new Map<string, Write[]>();
  for (const w of run.writes) {
    let l = writesByKey.get(w.key);
    if (!l) writesByKey.set(w.key, (l = []));
    l.push(w);
  }
  for (const [key, ws] of writesByKey) {
    // a key several writers wrote (never deleted): its writes in resourceVersion order
    if (ws.every((w) => w.rv !== undefined)) ws.sort((a, b) => a.rv! - b.rv!);
    const evs = byKey.get(key) ?? [];
    const p = (s: string): void => void run.problems.push(`history of ${key}: ${s}`);
    let last: any;
    for (let i = 0; i < Math.max(ws.length, evs.length); i++) {
      const w = ws[i];
      const e = evs[i];
      if (!e) {
        p(`the watch from the start has no event for write ${i} (${w!.what}${w!.rv ? ` answered ${w!.rv}` : ''}); ${evs.length} events for ${ws.length} writes`);
        break;
      }
      if (!w) {
        p(`an event ${e.type}@${e.rv} no write explains`);
        break;
      }
      if (e.type !== w.type) {
        p(`event ${i} is ${e.type}@${e.rv}, the write (${w.what}) was ${w.type}${w.rv ? `@${w.rv}` : ''}`);
        break;
      }
      if (w.rv !== undefined) {
        if (e.rv !== w.rv) {
          p(`event ${i} (${e.type}) at ${e.rv}, the write (${w.what}) was answered ${w.rv}`);
          break;
        }
        if (!isDeepStrictEqual(e.obj, w.obj)) {
          p(`event ${e.type}@${e.rv} carries ${JSON.stringify(e.obj).slice(0, 400)}, the write (${w.what}) was answered ${JSON.stringify(w.obj).slice(0, 400)}`);
          break;
        }
      } else if (last && !isDeepStrictEqual(e.obj, atRV(last, e.rv))) {
        p(`DELETED@${e.rv} (${w.what}) carries ${JSON.stringify(e.obj).slice(0, 400)}, the last state was ${JSON.stringify(last).slice(0, 400)}`);
        break;
      }
      last = e.type === 'DELETED' ? undefined : e.obj;
    }
  }
  for (const key of byKey.keys()) if (!writesByKey.has(key)) run.problems.push(`history of ${key}: events and no write`);
  return history;
}

/** whether a watch's newest segment has every event the history holds for it */
function caughtUp(history: HistoryEvent[], p: WatchPlan): boolean {
  const seg = p.segments[p.segments.length - 1]!;
  const scope = scopeOf(p.ns);
  if (seg.log.status === 0) return false;
  // refused: checkWatch says so
  if (seg.log.status !== 200) return true;
  if (p.segments.length === 1 && p.start !== 'rv') {
    // the replayed stream is the final state
    const state = new Map<string, number>();
    for (const e of seg.log.events()) {
      if (e.type === 'BOOKMARK' || e.type === 'ERROR' || !scope(keyOf(e.object))) continue;
      if (e.type === 'DELETED') state.delete(keyOf(e.object));
      else state.set(keyOf(e.object), rvOf(e.object));
    }
    const want = stateAt(history, Infinity, p.sel, scope);
    return want.length === state.size && want.every((o) => state.get(keyOf(o)) === rvOf(o));
  }
  const want = watchEvents(history, seg.from, p.sel, scope);
  if (want.length === 0) return true;
  const last = want[want.length - 1]!.rv;
  return seg.log.events().some((e: WireEvent) => e.type !== 'BOOKMARK' && e.type !== 'ERROR' && rvOf(e.object) >= last);
}

/** the checks of one watch, all its segments */
function checkWatch(run: Run, history: HistoryEvent[], p: WatchPlan): void {
  const scope = scopeOf(p.ns);
  const problem = (s: string): void => void run.problems.push(`watch ${p.name} (${p.segments[0]!.path}): ${s}`);
  for (let i = 0; i < p.segments.length; i++) {
    const seg = p.segments[i]!;
    const log = seg.log;
    const events: WireEvent[] = log.events();
    if (log.status !== 200) return problem(`segment ${i} of ${p.segments.length} answered ${log.status} (ended ${log.ended})`);
    const upTo = seg.lastRV ?? Infinity;
    const initial = i === 0 && p.start !== 'rv';
    let skip = 0;
    if (initial) {
      const end = p.bookmarks ? initialEnd(events) : undefined;
      if (p.bookmarks && p.start === 'stream' && end === undefined) return problem('no initial-events-end bookmark');
      const { x, count, problems } = explainInitial(history, events, p.sel, scope, end, upTo);
      for (const s of problems) problem(`segment ${i}: ${s}`);
      if (problems.length) return;
      if ((p.start === 'unset' || p.start === 'stream') && x < p.minRV) problem(`the initial state is at ${x}, before ${p.minRV}, a write acknowledged before the watch was sent`);
      skip = count;
    } else {
      for (const s of compareEvents(events, watchEvents(history, seg.from, p.sel, scope, upTo), scope)) problem(`segment ${i} from ${seg.from}${seg.lastRV ? ` to ${seg.lastRV}` : ''}: ${s}`);
    }
    for (const s of orderProblems(events, skip)) problem(`segment ${i}: ${s}`);
  }
}

async function scenario(backend: 'sqlite' | 'memory'): Promise<void> {
  const c = await startCluster({ args: [NO_CA_PUBLISHER, `--storage-backend=${backend}`] });
  let run: Run | undefined;
  try {
    for (const ns of [...NSS, END_NS]) {
      const r = await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
      assert.equal(r.status, 201, r.text);
    }
    const start = Number((await c.raw('GET', '/api/v1/configmaps')).json().metadata.resourceVersion);
    run = new Run(c);
    const r0 = run;
    // the reference: every event of every namespace from the start
    const ref = run.watch({ name: 'reference', sel: everything, start: 'rv', rv: start, bookmarks: true });
    for (const name of SHARED) {
      const r = await c.raw('POST', collection('wc-0'), { body: configMap('wc-0', name, { sel: 'in' }, { v: '0' }) });
      assert.equal(r.status, 201, r.text);
      run.record(`wc-0/${name}`, 'ADDED', r, 'create');
    }
    // watches from the start
    run.watch({ name: 'wc-0 from the start', ns: 'wc-0', sel: everything, start: 'rv', rv: start, bookmarks: false });
    run.watch({ name: 'wc-1 sel=in from the start (HTTP/2)', ns: 'wc-1', sel: SELECTORS.in!, start: 'rv', rv: start, bookmarks: true, http2: true });
    run.watch({ name: 'all sel!=in from the start', sel: SELECTORS.notIn!, start: 'rv', rv: start, bookmarks: false });
    run.watch({ name: 'all name=o1-0 from the start (HTTP/2)', sel: SELECTORS.name!, start: 'rv', rv: start, bookmarks: false, http2: true });
    run.watch({ name: 'wc-2 from the start (HTTP/2)', ns: 'wc-2', sel: everything, start: 'rv', rv: start, bookmarks: true, http2: true });
    run.watch({ name: 'all namespace!=wc-1 from the start', sel: SELECTORS.notWc1!, start: 'rv', rv: start, bookmarks: false });

    const writers = Array.from({ length: WRITERS }, (_, w) => writer(r0, w));
    const listers = [lister(run, 7), lister(run, 8)];
    // watches begun while the writers write, and watches resumed from where they were cut off
    const { rnd, pick } = random(backend === 'sqlite' ? 11 : 12);
    const resumable: WatchPlan[] = [];
    const starter = (async () => {
      for (let k = 0; !r0.stopped; k++) {
        await sleep(RUN_MS / 8);
        if (r0.stopped) break;
        const ns = pick([...NSS, undefined]);
        const sel = pick(Object.values(SELECTORS));
        const recent = r0.maxAnswered || start;
        const kinds = ['unset', 'zero', 'rv', 'stream', 'streamAt'] as const;
        const kind = kinds[k % kinds.length]!;
        const http2 = k % 2 === 1;
        const name = `${kind} ${ns ?? 'all'} ${sel.query || 'everything'} (${k}${http2 ? ', HTTP/2' : ''})`;
        if (kind === 'rv') r0.watch({ name, ns, sel, start: 'rv', rv: recent, bookmarks: rnd() < 0.5, http2 });
        else if (kind === 'streamAt') r0.watch({ name, ns, sel, start: 'stream', rv: recent, bookmarks: true, http2 });
        else r0.watch({ name, ns, sel, start: kind, bookmarks: kind === 'stream' || rnd() < 0.5, http2 });
        if (k === 1) resumable.push(r0.watch({ name: 'resumed: wc-2 from a recent resourceVersion', ns: 'wc-2', sel: everything, start: 'rv', rv: recent, bookmarks: false }));
        if (k === 2) resumable.push(r0.watch({ name: 'resumed: all sel in (in,out) streaming (HTTP/2)', sel: SELECTORS.inOrOut!, start: 'stream', bookmarks: true, http2: true }));
        if (k === 3) resumable.push(r0.watch({ name: 'resumed: wc-1 !sel from the start', ns: 'wc-1', sel: SELECTORS.unlabelled!, start: 'rv', rv: start, bookmarks: true }));
        if (k === 1) resumable.push(r0.watch({ name: 'resumed when timed out: wc-0 sel=in (HTTP/2)', ns: 'wc-0', sel: SELECTORS.in!, start: 'rv', rv: recent, bookmarks: true, timeoutSeconds: 1, http2: true }));
        if (k === 2) resumable.push(r0.watch({ name: 'resumed when timed out: all namespace!=wc-1 streaming', sel: SELECTORS.notWc1!, start: 'stream', bookmarks: true, timeoutSeconds: 2 }));
      }
    })();
    const resumer = (async () => {
      while (!r0.stopped) {
        await sleep(300 + Math.floor(rnd() * 600));
        for (const p of resumable) {
          const seg = p.segments[p.segments.length - 1]!;
          // a segment is cut off only once answered, a streaming list only after its initial state
          if (seg.log.status === 0) continue;
          if (p.timeoutSeconds) {
            if (seg.log.ended) r0.resume(p);
            continue;
          }
          if (p.segments.length === 1 && p.start !== 'rv' && initialEnd(seg.log.events()) === undefined) continue;
          if (rnd() < 0.6) r0.resume(p);
        }
      }
    })();
    await sleep(RUN_MS);
    run.stopped = true;
    await Promise.all([...writers, ...listers, starter, resumer]);

    // a last write every all-namespaces watch sees: the reference has the whole history once it has it
    const endWrite = await c.raw('POST', collection(END_NS), { body: configMap(END_NS, 'end', {}, {}) });
    assert.equal(endWrite.status, 201, endWrite.text);
    const endRV = rvOf(endWrite.json());
    const refLog = ref.segments[0]!.log;
    assert.ok(await refLog.waitFor((evs) => lastRV(evs, start, false) >= endRV, 20_000), `the reference watch did not reach ${endRV}: ${refLog.events().length} events, ended ${refLog.ended}`);
    const history = historyFrom(run, refLog);
    assert.ok(history.length > 100, `only ${history.length} events`);

    // every other watch: wait until it has what it must get (at most 10 s), then compare
    const deadline = Date.now() + 10_000;
    for (const p of run.watches) {
      for (;;) {
        const seg = p.segments[p.segments.length - 1]!;
        if (await seg.log.waitFor(() => caughtUp(history, p), deadline - Date.now())) break;
        // a watch the server ended (timeoutSeconds) goes on where it was
        if (!seg.log.ended || !p.timeoutSeconds || Date.now() > deadline) break;
        run.resume(p);
      }
    }
    for (const p of run.watches) checkWatch(run, history, p);
    for (const l of run.lists) checkList(run, history, l);
    const segments = run.watches.reduce((n, p) => n + p.segments.length, 0);
    const pages = run.lists.reduce((n, l) => n + l.pages.length, 0);
    console.log(`# ${backend}: ${run.writes.length} writes, ${history.length} events, ${run.watches.length} watches in ${segments} segments, ${run.lists.length} lists in ${pages} pages`);

    if (backend === 'sqlite') {
      await restart(run, c, history, refLog, start);
      await stopWhileWriting(run, c);
    }
    run.closeAll();
    assert.deepEqual(run.problems.slice(0, 25).map((s) => s.slice(0, 700)), [], `${run.problems.length} problems`);
  } finally {
    run?.closeAll();
    await c.stop();
  }
}

/**
 * SIGTERM and a start on the same data directory: every acknowledged write is there, new writes
 * get higher resourceVersions, a watch resumed from the last resourceVersion seen before the stop
 * loses nothing (or is told 410 Expired: the new watch cache begins at the revision it loaded, as
 * Kubernetes' does), as does an Exact list or a continue token from before the stop; a watch from
 * the revision of a list after the start loses nothing.
 */
async function restart(run: Run, c: Cluster, history: HistoryEvent[], ref: Stream, start: number): Promise<void> {
  const problem = (s: string): void => void run.problems.push(`after the restart: ${s}`);
  const lastSeen = lastRV(ref.events(), start, false);
  const middle = history[Math.floor(history.length / 2)]!.rv;
  // a paged list begun before the stop and continued after it
  const across: ListRecord = { name: 'wc-0 paged across the restart', ns: 'wc-0', sel: everything, mode: 'pagedAt', limit: 2, minRV: 0, pages: [await c.raw('GET', `${collection('wc-0')}?limit=2`)] };
  across.rv = Number(across.pages[0]!.json().metadata.resourceVersion);
  run.closeAll();
  assert.equal(await c.stopProcess('SIGTERM'), 0, c.logs.slice(-2000));
  await c.launch();
  const outcome: string[] = [];
  try {
    const final = stateAt(history, Infinity);
    let listed = 0;
    for (const ns of NSS) {
      const r = await c.raw('GET', collection(ns));
      if (r.status !== 200) {
        problem(`list ${ns}: ${r.status}`);
        continue;
      }
      for (const s of compareItems(r.json().items, final.filter((o) => o.metadata.namespace === ns))) problem(`list ${ns}: ${s}`);
      listed = Number(r.json().metadata.resourceVersion);
      if (listed < lastSeen) problem(`list ${ns} at ${listed}, below ${lastSeen}`);
    }
    const watches = [
      { name: 'the watch resumed from the last resourceVersion seen', from: lastSeen, scope: ours, mayExpire: true, log: c.stream(`${collection()}?watch=1&resourceVersion=${lastSeen}`) },
      { name: 'a watch of wc-0 from the middle of the history', from: middle, scope: scopeOf('wc-0'), mayExpire: true, log: c.stream(`${collection('wc-0')}?watch=1&resourceVersion=${middle}`) },
      { name: 'a watch from a list after the start', from: listed, scope: ours, mayExpire: false, log: c.stream(`${collection()}?watch=1&resourceVersion=${listed}`) },
    ];
    for (const w of watches) await w.log.ready;
    // new writes: created, modified, deleted
    const after: HistoryEvent[] = [];
    const base = collection('wc-0');
    const cr = await c.raw('POST', base, { body: configMap('wc-0', 'after-restart', { sel: 'in' }, { v: '1' }) });
    if (cr.status !== 201) return problem(`create: ${cr.status} ${cr.text.slice(0, 200)}`);
    after.push({ key: 'wc-0/after-restart', type: 'ADDED', rv: rvOf(cr.json()), obj: cr.json() });
    const pa = await c.raw('PATCH', `${base}/shared-0`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { data: { after: 'restart' } } });
    if (pa.status !== 200) return problem(`patch: ${pa.status} ${pa.text.slice(0, 200)}`);
    after.push({ key: 'wc-0/shared-0', type: 'MODIFIED', rv: rvOf(pa.json()), obj: pa.json() });
    const de = await c.raw('DELETE', `${base}/after-restart`);
    if (de.status !== 200) return problem(`delete: ${de.status} ${de.text.slice(0, 200)}`);
    for (const w of after) if (w.rv <= lastSeen) problem(`${w.type} ${w.key} answered ${w.rv}, not after ${lastSeen}`);
    for (const { name, from, scope, mayExpire, log } of watches) {
      if (log.status !== 200) {
        problem(`${name}: ${log.status}`);
        continue;
      }
      const gone = (evs: WireEvent[]) => evs.some((e) => e.type === 'ERROR' || (e.type === 'DELETED' && keyOf(e.object) === 'wc-0/after-restart'));
      await log.waitFor(gone, 10_000);
      const events: WireEvent[] = log.events();
      const err = events.find((e) => e.type === 'ERROR');
      outcome.push(`${name}: ${err ? `${err.object.code} ${err.object.reason}` : `${events.length} events`}`);
      if (err) {
        if (!mayExpire || err.object.code !== 410 || err.object.reason !== 'Expired') problem(`${name}: ${JSON.stringify(err.object).slice(0, 300)}`);
        continue;
      }
      // what happened between `from` and the stop, then the new writes
      const deleted = events.find((e) => e.type === 'DELETED' && keyOf(e.object) === 'wc-0/after-restart');
      if (!deleted) {
        problem(`${name}: no DELETED event for wc-0/after-restart`);
        continue;
      }
      const gone2: HistoryEvent = { type: 'DELETED', rv: rvOf(deleted.object), key: 'wc-0/after-restart', obj: atRV(after[0]!.obj, rvOf(deleted.object)) };
      const want = [...watchEvents(history, from, everything, scope), ...after, gone2].filter((e) => scope(e.key));
      for (const s of compareEvents(events, want, scope)) problem(`${name}: ${s}`);
      for (const s of orderProblems(events, 0)) problem(`${name}: ${s}`);
    }
    for (const w of watches) w.log.close();
    // from before the stop: an Exact list, a paged one, and the continuation of one (or 410 Expired)
    const exact: ListRecord = { name: 'wc-1 exact', ns: 'wc-1', sel: everything, mode: 'exact', rv: middle, minRV: 0, pages: [await c.raw('GET', `${collection('wc-1')}?resourceVersion=${middle}&resourceVersionMatch=Exact`)] };
    const paged: ListRecord = { name: 'wc-2 paged', ns: 'wc-2', sel: everything, mode: 'pagedAt', rv: middle, limit: 3, minRV: 0, pages: [await c.raw('GET', `${collection('wc-2')}?resourceVersion=${middle}&limit=3`)] };
    for (const l of [paged, across]) {
      for (let r = l.pages[l.pages.length - 1]!; r.status === 200 && r.json().metadata.continue; r = l.pages[l.pages.length - 1]!) {
        l.pages.push(await c.raw('GET', `${collection(l.ns)}?limit=${l.limit}&continue=${encodeURIComponent(r.json().metadata.continue)}`));
      }
    }
    for (const l of [exact, paged, across]) {
      const bad = l.pages.find((r) => r.status !== 200);
      outcome.push(`${l.name} from before: ${bad ? `${bad.status} ${bad.json().reason}` : `${l.pages.length} pages`}`);
      if (bad?.status === 410 && bad.json().reason === 'Expired') continue;
      checkList(run, history, l);
    }
  } finally {
    console.log(`# after the restart: ${outcome.join('; ')}`);
  }
}

/**
 * SIGTERM while the writers write: every write answered before the server stopped is there after
 * a start on the same data directory (an object a write was in flight for may also show that
 * write), and a watch open at the stop ended between two events, having lost none of the
 * answered ones up to its last.
 */
async function stopWhileWriting(phase1: Run, c: Cluster): Promise<void> {
  const problem = (s: string): void => void phase1.problems.push(`stopped while writing: ${s}`);
  const before = await c.raw('GET', collection());
  assert.equal(before.status, 200, before.text);
  const base = new Map<string, any>();
  for (const o of before.json().items) if (ours(keyOf(o))) base.set(keyOf(o), { kind: 'ConfigMap', apiVersion: 'v1', ...o });
  const baseRV = Number(before.json().metadata.resourceVersion);
  const watch = c.stream(`${collection()}?watch=1&resourceVersion=${baseRV}`);
  await watch.ready;
  const run = new Run(c);
  const writers = Array.from({ length: WRITERS }, (_, w) => writer(run, w, base));
  await sleep(1500);
  run.terminating = true;
  const proc = c.proc!;
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  proc.kill('SIGTERM');
  const code = await exited;
  run.stopped = true;
  await Promise.all(writers);
  run.closeAll();
  assert.equal(code, 0, c.logs.slice(-2000));
  await watch.untilEnd(10_000);
  let events: WireEvent[] = [];
  try {
    events = watch.events();
  } catch (e) {
    problem(`the watch open at the stop ended inside an event: ${(e as Error).message}`);
  }
  await c.stopProcess();
  await c.launch();

  // per object: the state before, then its answered writes in order (the shared ones' by resourceVersion)
  const writes = new Map<string, Write[]>();
  for (const w of run.writes) {
    let l = writes.get(w.key);
    if (!l) writes.set(w.key, (l = []));
    l.push(w);
  }
  const after = await c.raw('GET', collection());
  assert.equal(after.status, 200, after.text);
  const now = new Map<string, any>();
  for (const o of after.json().items) if (ours(keyOf(o))) now.set(keyOf(o), o);
  let maxAcked = baseRV;
  for (const key of new Set([...base.keys(), ...writes.keys(), ...now.keys()])) {
    const ws = writes.get(key) ?? [];
    if (ws.every((w) => w.rv !== undefined)) ws.sort((a, b) => a.rv! - b.rv!);
    let want = base.get(key);
    let known = want ? rvOf(want) : 0;
    for (const w of ws) {
      want = w.type === 'DELETED' ? undefined : w.obj;
      if (w.rv) known = Math.max(known, w.rv);
    }
    maxAcked = Math.max(maxAcked, known);
    const got = now.get(key);
    const same = got === undefined ? want === undefined : want !== undefined && compareItems([got], [want]).length === 0;
    if (same) continue;
    // a write in flight at the stop may have been made (or not)
    if (run.uncertain.has(key) && (got === undefined || rvOf(got) > known)) continue;
    problem(`${key}: ${got ? `${rvOf(got)} ${JSON.stringify(got).slice(0, 300)}` : 'absent'}, the last answered write left ${want ? `${rvOf(want)} ${JSON.stringify(want).slice(0, 300)}` : 'none'}${run.uncertain.has(key) ? ' (a write was in flight)' : ''}`);
  }
  // the watch: every event an answered write or one in flight, in order, none answered before its last missing
  const mine = events.filter((e) => e.type !== 'BOOKMARK' && ours(keyOf(e.object)));
  for (const s of orderProblems(events, 0)) problem(`the watch open at the stop: ${s}`);
  const last = mine.length ? rvOf(mine[mine.length - 1]!.object) : baseRV;
  const seen = new Map(mine.map((e) => [rvOf(e.object), e]));
  for (const w of run.writes) {
    if (w.rv === undefined || w.rv > last) continue;
    const e = seen.get(w.rv);
    if (!e || e.type !== w.type || compareItems([e.object], [w.obj]).length) problem(`the watch open at the stop, up to ${last}: ${e ? `${e.type} ${JSON.stringify(e.object).slice(0, 200)}` : 'nothing'} at ${w.rv}, the write was ${w.type} ${w.key}`);
  }
  const acked = new Set(run.writes.map((w) => w.rv));
  for (const e of mine) if (e.type !== 'DELETED' && !acked.has(rvOf(e.object)) && !run.uncertain.has(keyOf(e.object))) problem(`the watch open at the stop: ${e.type} ${keyOf(e.object)}@${rvOf(e.object)}, no write made it`);
  // and the resourceVersions go on
  const next = await c.raw('POST', collection(END_NS), { body: configMap(END_NS, 'after-the-second-stop', {}, {}) });
  if (next.status !== 201 || rvOf(next.json()) <= maxAcked) problem(`a create after the start: ${next.status} at ${next.json().metadata?.resourceVersion}, not after ${maxAcked}`);
  console.log(`# stopped while writing: ${run.writes.length} writes answered, ${run.uncertain.size} objects with a write in flight, the open watch had ${mine.length} events`);
}

describe('watch and list consistency under concurrent writes', () => {
  test('sqlite backend, and a restart on its data directory', { timeout: 60_000 }, async () => {
    await scenario('sqlite');
  });
  test('memory backend', { timeout: 60_000 }, async () => {
    await scenario('memory');
  });
});
