// In-process micro-benchmarks of the per-request costs that the profiles of `npm run bench` point
// at (see bench/README.md), each beside the cheaper way the report suggests, so that a suggested
// fix comes with its measured saving. Prints one JSON document. Run: node dist/bench/hotspots.js
// (a benchmark, not a test: nothing here is asserted)
import { performance } from 'node:perf_hooks';
import client from 'prom-client';
import { APIServerMetrics } from '../src/apiserver/metrics.js';
import { rfc3339 } from '../src/machinery/time.js';
import { WatchHub } from '../src/storage/watch-hub.js';
import type { StorageEvent } from '../src/storage/interface.js';
import { BUILTIN_KINDS } from '../src/schema/kinds.js';
import { jsonStrictProblems } from '../src/codec/duplicates.js';
import { stringifyWithVerbatim, type VerbatimSpan } from '../src/codec/verbatim.js';
import { normalize } from '../src/codec/json.js';
import { negotiateOutput } from '../src/codec/negotiate.js';
import { resetFieldsFor, trackUpdate } from '../src/patch/ssa/index.js';
import { admissionAttributes, admissionAttributesOf } from '../src/apiserver/admission/wiring.js';
import { round } from './common.js';

/** ns per call of fn, best of 5 runs of at least 200 ms each (after a warm-up run) */
function nsPerOp(fn: (i: number) => void): number {
  let best = Infinity;
  for (let run = 0; run < 6; run++) {
    let n = 0;
    const t0 = performance.now();
    let t = t0;
    while (t - t0 < 200) {
      for (let i = 0; i < 1000; i++) fn(n + i);
      n += 1000;
      t = performance.now();
    }
    if (run > 0) best = Math.min(best, ((t - t0) * 1e6) / n);
  }
  return round(best, 1);
}

/** the request metrics as server.ts records them at the close of every resource request */
function metrics() {
  const m = new APIServerMetrics();
  const labels = { group: '', version: 'v1', resource: 'configmaps', subresource: '', scope: 'resource' };
  const query = new URLSearchParams('');
  // (the request line's RequestInfo, kept per line: its series is found by the object)
  const line = { verb: 'get' };
  const current = nsPerOp((i) => {
    m.observe(line, query.get('dryRun') === 'All', false, 200, (i % 100) / 10000, (i % 100) / 10000, () => ({ ...labels, verb: 'GET' }));
  });
  // the suggested way: the label children looked up once per distinct label set, by a string key
  const reg = new client.Registry();
  const requests = new client.Counter({ name: 'r_total', help: 'h', labelNames: ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'], registers: [reg] });
  const duration = new client.Histogram({
    name: 'd_seconds',
    help: 'h',
    labelNames: ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
    buckets: [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
    registers: [reg],
  });
  const children = new Map<string, { c: ReturnType<typeof requests.labels>; h: ReturnType<typeof duration.labels> }>();
  const cached = nsPerOp((i) => {
    const verb = 'GET';
    const dry = query.get('dryRun') === 'All' ? 'All' : '';
    const key = `${verb}|${dry}|${labels.group}|${labels.version}|${labels.resource}|${labels.subresource}|${labels.scope}|200`;
    let ch = children.get(key);
    if (!ch) {
      ch = {
        c: requests.labels(verb, dry, labels.group, labels.version, labels.resource, labels.subresource, labels.scope, 'apiserver', '200'),
        h: duration.labels(verb, dry, labels.group, labels.version, labels.resource, labels.subresource, labels.scope, 'apiserver'),
      };
      children.set(key, ch);
    }
    ch.c.inc();
    ch.h.observe((i % 100) / 10000);
  });
  // plain numbers per label set, handed to prom-client only when /metrics is scraped (a collect() hook)
  const BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
  const plain = new Map<string, { count: number; sum: number; buckets: Float64Array }>();
  const plainNs = nsPerOp((i) => {
    const dry = query.get('dryRun') === 'All' ? 'All' : '';
    const key = `GET|${dry}|${labels.group}|${labels.version}|${labels.resource}|${labels.subresource}|${labels.scope}|200`;
    let e = plain.get(key);
    if (!e) plain.set(key, (e = { count: 0, sum: 0, buckets: new Float64Array(BUCKETS.length) }));
    const v = (i % 100) / 10000;
    e.count++;
    e.sum += v;
    for (let b = 0; b < BUCKETS.length; b++) {
      if (v <= BUCKETS[b]!) {
        e.buckets[b]!++;
        break;
      }
    }
  });
  return {
    where: 'src/apiserver/server.ts route(): res.once("close") -> APIServerMetrics.observe (src/apiserver/metrics.ts)',
    currentNsPerRequest: current,
    cachedLabelChildrenNsPerRequest: cached,
    plainCountersExportedOnScrapeNsPerRequest: plainNs,
  };
}

function timestamps() {
  const current = nsPerOp((i) => void rfc3339(1_760_000_000_000 + i));
  let lastSec = -1;
  let last = '';
  const cached = nsPerOp((i) => {
    const ms = 1_760_000_000_000 + i;
    const s = Math.floor(ms / 1000);
    if (s !== lastSec) {
      lastSec = s;
      last = new Date(s * 1000).toISOString().replace('.000Z', 'Z');
    }
    void last;
  });
  return { where: 'src/apiserver/registry/store.ts rfc3339() (every create)', currentNsPerCall: current, cachedPerSecondNsPerCall: cached };
}

/**
 * The per-write steps of a create of the bench's 1 KB ConfigMap, each beside JSON.parse of the
 * same body for scale: the strict-decoding scan (duplicate and unknown fields), normalization,
 * managed-fields tracking, negotiation, and the admission attributes of one phase (the store's
 * way beside the object spread it replaced).
 */
function writePath() {
  const T = 'io.k8s.api.core.v1.ConfigMap';
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bench-1', labels: { app: 'bench', tier: 'load' } }, data: { payload: 'x'.repeat(900) } });
  const parsed = Array.from({ length: 256 }, () => JSON.parse(body));
  const normalized = parsed.map((o) => normalize(T, o).obj);
  const info = { manager: 'loadgen', apiVersion: 'v1', subresource: '', resetFields: resetFieldsFor('', false) };
  const negotiation = { list: false, table: true, metadata: true, protobuf: true, cbor: false };
  const kind = BUILTIN_KINDS.find((k) => k.group === '' && k.kind === 'ConfigMap')!;
  const user = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };
  const object = { metadata: { name: 'bench-1' } };
  const request = () => ({ namespace: 'default', name: '', subresource: undefined, options: {}, user, warnings: [] as string[], auditAnnotations: undefined });
  return {
    where: 'src/apiserver/handlers.ts handleCreate and the store: decodeBody, normalizeBody, trackUpdate, outputChoice, admission',
    jsonParseNs: nsPerOp(() => void JSON.parse(body)),
    strictScanNs: nsPerOp(() => void jsonStrictProblems(body, T)),
    normalizeNs: nsPerOp((i) => void normalize(T, parsed[i & 255])),
    trackUpdateCreateNs: nsPerOp((i) => void trackUpdate(undefined, normalized[i & 255], T, info)),
    negotiateJSONNs: nsPerOp(() => void negotiateOutput('application/json', negotiation)),
    negotiateKubectlTableNs: nsPerOp(() => void negotiateOutput('application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json', negotiation)),
    admissionAttributesNs: nsPerOp(() => void admissionAttributesOf(kind, request(), 'CREATE', object, undefined, { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' }, false)),
    admissionAttributesBySpreadNs: nsPerOp(() => void admissionAttributes(kind, { ...request(), operation: 'CREATE', object, oldObject: undefined, options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' }, dryRun: false })),
  };
}

/**
 * The stored JSON of a write (store.ts encode): JSON.stringify of the object beside
 * stringifyWithVerbatim, which writes the long escape-free values from the request's text (the
 * strict scan's spans), for the bench's 1 KB ConfigMap and for a Secret of 64 KiB of base64 (a
 * Helm release); the scan that finds the spans runs in every write anyway.
 */
function storedJSON() {
  const T = 'io.k8s.api.core.v1.ConfigMap';
  const meta = { name: 'bench-1', namespace: 'default', uid: '9b3f8d4e-1c2a-4e5b-8f6a-0d1e2f3a4b5c', creationTimestamp: '2026-11-22T23:27:14Z', labels: { app: 'bench', tier: 'load' } };
  const cases: [string, any][] = [
    ['configMap1KB', { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta, data: { payload: 'x'.repeat(874) } }],
    ['secret64KB', { apiVersion: 'v1', kind: 'Secret', metadata: meta, type: 'Opaque', data: { release: Buffer.alloc(48 * 1024, 7).toString('base64') } }],
    ['configMap2000LongValues', { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta, data: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`key-${i}`, `${i}`.padStart(300, 'v')])) }],
  ];
  const out: Record<string, unknown> = { where: 'src/apiserver/registry/store.ts encode() with src/codec/verbatim.ts' };
  for (const [name, obj] of cases) {
    const text = JSON.stringify(obj);
    const spans: VerbatimSpan[] = [];
    jsonStrictProblems(text, name.startsWith('secret') ? 'io.k8s.api.core.v1.Secret' : T, false, spans);
    if (spans.length === 0) throw new Error(`${name}: no long values found`);
    const parsed = JSON.parse(text);
    const serialize = () => JSON.stringify(parsed);
    out[name] = {
      bytes: text.length,
      // (each text measured as the store uses it: its UTF-8 length read, which flattens the spliced one)
      stringifyNs: nsPerOp(() => void Buffer.byteLength(serialize())),
      verbatimNs: nsPerOp(() => void Buffer.byteLength(stringifyWithVerbatim(parsed, { text, spans }, serialize))),
    };
  }
  return out;
}

/** one commit's delivery through the storage watch hub, with one watcher per served resource as in the server */
async function hubDelivery(batch: number) {
  const prefixes = [...new Set(BUILTIN_KINDS.filter((k) => !k.virtual).map((k) => `/registry/${k.storagePrefix}/`))];
  const hub = new WatchHub({ history: () => [], committed: () => 0, compacted: () => 0 });
  let seen = 0;
  let progress = 0;
  for (const p of prefixes) hub.watch(p, { afterRevision: 0, onEvents: (e) => void (seen += e.length), onError: () => {}, onProgress: () => void progress++ });
  await new Promise((r) => setTimeout(r, 10)); // the watchers turn live
  const value = new Uint8Array(1024);
  let rev = 0;
  const ns = nsPerOp(() => {
    const evs: StorageEvent[] = [];
    for (let j = 0; j < batch; j++) {
      rev++;
      evs.push({ type: 'put', kv: { key: `/registry/configmaps/default/cm${rev}`, value, createRevision: rev, modRevision: rev }, revision: rev });
    }
    hub.deliver(evs, rev);
  });
  // the suggested dispatch: the resource prefix of each key looked up in a map of groups, instead
  // of testing every group's prefix against every event
  const groups = new Map(prefixes.map((p) => [p, [] as StorageEvent[]]));
  let rev2 = 0;
  const byMap = nsPerOp(() => {
    for (const g of groups.values()) g.length = 0;
    for (let j = 0; j < batch; j++) {
      rev2++;
      const key = `/registry/configmaps/default/cm${rev2}`;
      const e: StorageEvent = { type: 'put', kv: { key, value, createRevision: rev2, modRevision: rev2 }, revision: rev2 };
      const p = key.slice(0, key.indexOf('/', 10) + 1);
      groups.get(p)?.push(e);
    }
  });
  return {
    watchersByPrefix: prefixes.length,
    eventsPerCommit: batch,
    nsPerCommit: ns,
    nsPerEvent: round(ns / batch, 1),
    suggestedPrefixMapNsPerEvent: round(byMap / batch, 1),
    delivered: seen > 0,
    progressCalls: progress > 0,
  };
}

async function main() {
  const out = {
    node: process.version,
    note: 'ns per operation, best of 5 runs of 200 ms; the consumers of the hub do nothing, so hub figures are the hub\'s own cost',
    requestMetrics: metrics(),
    creationTimestamp: timestamps(),
    writePath: writePath(),
    storedJSON: storedJSON(),
    watchHubDeliver: {
      where: 'src/storage/watch-hub.ts WatchHub.deliver: every commit tests every event against every watched prefix (one per served resource)',
      runs: [await hubDelivery(1), await hubDelivery(8), await hubDelivery(64)],
    },
  };
  process.stdout.write(JSON.stringify(out, null, 2) + '\n');
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
