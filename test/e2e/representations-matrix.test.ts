// Issue 4, end to end over raw HTTPS: every verb that returns objects (get, list, watch, create,
// update, patch, delete) in every representation (JSON, YAML, Protobuf, CBOR with its gate on,
// Table, PartialObjectMetadata, PartialObjectMetadataList), each answer decoded by a decoder that
// is not the server's and compared with the JSON form of the same object:
// - Protobuf: a small reader written here from the field numbers of Kubernetes' generated.proto
//   (runtime.Unknown, meta/v1 ObjectMeta/ListMeta/Status/WatchEvent/PartialObjectMetadata(List),
//   core/v1 ConfigMap, apps/v1 Deployment), and a small writer for request bodies;
// - CBOR: the cborg library (the server uses cbor-x);
// - YAML: the yaml library, compared in full with the JSON form.
// Then the negotiation rules (q values, fallbacks, 406, 415, the k8s\0 prefix, Content-Type),
// response compression at Kubernetes' threshold, pretty output, and large lists written item by
// item.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import YAML from 'yaml';
import { startCluster, expectStatus, type Cluster, type RawResponse } from './harness.js';
import { everyKindManifest, certificateRequestPEM } from './every-kind.js';
import { cborDecode, cborDecodeSequence, cborgP } from './cborread.js';

const PB = 'application/vnd.kubernetes.protobuf';
const META = ';g=meta.k8s.io;v=v1';

// ---- an independent Protobuf reader (wire format + Kubernetes' field numbers) ----

type Fields = Map<number, (bigint | Buffer)[]>;

function varintAt(b: Buffer, p: number): [bigint, number] {
  let v = 0n;
  let shift = 0n;
  for (;;) {
    if (p >= b.length) throw new Error('truncated varint');
    const x = b[p++]!;
    v |= BigInt(x & 0x7f) << shift;
    if (x < 0x80) return [v, p];
    shift += 7n;
  }
}

function fields(b: Buffer): Fields {
  const m: Fields = new Map();
  let p = 0;
  while (p < b.length) {
    const [key, p1] = varintAt(b, p);
    p = p1;
    const no = Number(key >> 3n);
    const wt = Number(key & 7n);
    let v: bigint | Buffer;
    if (wt === 0) [v, p] = varintAt(b, p);
    else if (wt === 2) {
      const [len, p2] = varintAt(b, p);
      v = b.subarray(p2, p2 + Number(len));
      p = p2 + Number(len);
    } else if (wt === 1 || wt === 5) {
      v = b.subarray(p, p + (wt === 1 ? 8 : 4));
      p += wt === 1 ? 8 : 4;
    } else throw new Error(`unexpected wire type ${wt}`);
    if (!m.has(no)) m.set(no, []);
    m.get(no)!.push(v);
  }
  return m;
}
const last = (f: Fields, n: number) => f.get(n)?.at(-1);
const str = (f: Fields, n: number) => (last(f, n) as Buffer | undefined)?.toString('utf8');
const num = (f: Fields, n: number) => (last(f, n) === undefined ? undefined : Number(last(f, n) as bigint));
const msg = (f: Fields | undefined, n: number): Fields | undefined => (f && last(f, n) !== undefined ? fields(last(f, n) as Buffer) : undefined);
const msgs = (f: Fields, n: number): Fields[] => (f.get(n) ?? []).map((b) => fields(b as Buffer));
const strs = (f: Fields, n: number) => (f.get(n) ?? []).map((b) => (b as Buffer).toString('utf8'));
function strMap(f: Fields | undefined, n: number): Record<string, string> {
  const o: Record<string, string> = {};
  if (f) for (const e of msgs(f, n)) o[str(e, 1) ?? ''] = str(e, 2) ?? '';
  return o;
}
/** meta/v1 Time: seconds = 1 */
const time = (f?: Fields) => (f && num(f, 1) ? new Date(num(f, 1)! * 1000).toISOString().replace('.000Z', 'Z') : undefined); // the zero Time is JSON's null

/** meta/v1 ObjectMeta: name 1, generateName 2, namespace 3, uid 5, resourceVersion 6, generation 7, creationTimestamp 8, deletionTimestamp 9, labels 11, annotations 12, finalizers 14 */
function pbObjectMeta(f: Fields | undefined): any {
  if (!f) return undefined;
  return {
    name: str(f, 1),
    generateName: str(f, 2),
    namespace: str(f, 3),
    uid: str(f, 5),
    resourceVersion: str(f, 6),
    generation: num(f, 7),
    creationTimestamp: time(msg(f, 8)),
    deletionTimestamp: time(msg(f, 9)),
    labels: strMap(f, 11),
    annotations: strMap(f, 12),
    finalizers: strs(f, 14),
  };
}
/** core/v1 ConfigMap: metadata 1, data 2, immutable 4 */
const pbConfigMap = (f: Fields) => ({ metadata: pbObjectMeta(msg(f, 1)), data: strMap(f, 2), immutable: num(f, 4) === 1 });
/** apps/v1 Deployment: metadata 1, spec 2 (replicas 1, selector 2 {matchLabels 1}, template 3 {metadata 1, spec 2 {containers 2 {name 1, image 2}}}, minReadySeconds 5, revisionHistoryLimit 6, paused 7, progressDeadlineSeconds 9) */
function pbDeployment(f: Fields): any {
  const s = msg(f, 2);
  const tpl = msg(s, 3);
  const podSpec = msg(tpl, 2);
  return {
    metadata: pbObjectMeta(msg(f, 1)),
    spec: s && {
      replicas: num(s, 1),
      selector: { matchLabels: strMap(msg(s, 2), 1) },
      template: { metadata: { labels: strMap(msg(tpl, 1), 11) }, spec: { containers: podSpec ? msgs(podSpec, 2).map((c) => ({ name: str(c, 1), image: str(c, 2) })) : [] } },
      minReadySeconds: num(s, 5),
      revisionHistoryLimit: num(s, 6),
      paused: num(s, 7) === 1,
      progressDeadlineSeconds: num(s, 9),
    },
  };
}
/** the `k8s\0` prefix and runtime.Unknown: typeMeta 1 {apiVersion 1, kind 2}, raw 2 */
function pbUnknown(body: Buffer): { apiVersion?: string; kind?: string; raw: Buffer } {
  assert.deepEqual([...body.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00], 'the k8s\\0 prefix');
  const f = fields(body.subarray(4));
  const tm = msg(f, 1);
  return { apiVersion: tm && str(tm, 1), kind: tm && str(tm, 2), raw: (last(f, 2) as Buffer | undefined) ?? Buffer.alloc(0) };
}
/** a list: metadata 1 (ListMeta: resourceVersion 2, continue 3), items 2 */
const pbList = (raw: Buffer, item: (f: Fields) => any) => {
  const f = fields(raw);
  return { resourceVersion: str(msg(f, 1) ?? new Map(), 2), items: msgs(f, 2).map(item) };
};
/** meta/v1 Status: status 2, message 3, reason 4, code 6 */
const pbStatus = (raw: Buffer) => {
  const f = fields(raw);
  return { status: str(f, 2), message: str(f, 3), reason: str(f, 4), code: num(f, 6) };
};
/** watch frames: a 4-byte big-endian length, then a WatchEvent (type 1, object 2 {raw 1}) */
function pbWatchEvents(stream: Buffer): { type: string; object: Buffer }[] {
  const out: { type: string; object: Buffer }[] = [];
  let p = 0;
  while (p + 4 <= stream.length) {
    const len = stream.readUInt32BE(p);
    if (p + 4 + len > stream.length) break;
    const f = fields(stream.subarray(p + 4, p + 4 + len));
    out.push({ type: str(f, 1)!, object: (last(msg(f, 2)!, 1) as Buffer) ?? Buffer.alloc(0) });
    p += 4 + len;
  }
  return out;
}

// ---- a small Protobuf writer for request bodies ----

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}
const fld = (no: number, payload: Buffer) => Buffer.concat([varint((no << 3) | 2), varint(payload.length), payload]);
const fstr = (no: number, s: string) => fld(no, Buffer.from(s, 'utf8'));
const fint = (no: number, n: number) => Buffer.concat([varint(no << 3), varint(n)]);
const fmap = (no: number, o: Record<string, string> = {}) => Buffer.concat(Object.entries(o).map(([k, v]) => fld(no, Buffer.concat([fstr(1, k), fstr(2, v)]))));
function pbMetaBytes(m: any): Buffer {
  const parts = [fstr(1, m.name)];
  if (m.resourceVersion) parts.push(fstr(6, m.resourceVersion));
  parts.push(fmap(11, m.labels), ...(m.finalizers ?? []).map((x: string) => fstr(14, x)));
  return Buffer.concat(parts);
}
function pbEnvelope(apiVersion: string, kind: string, raw: Buffer): Buffer {
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), fld(1, Buffer.concat([fstr(1, apiVersion), fstr(2, kind)])), fld(2, raw)]);
}

// ---- CBOR through cborg: cborread.ts ----

// ---- the comparable view of an object: what every decoder above reads ----

function clean(v: any): any {
  if (Array.isArray(v)) {
    const a = v.map(clean).filter((x) => x !== undefined);
    return a.length ? a : undefined;
  }
  if (v && typeof v === 'object') {
    const o: any = {};
    for (const [k, x] of Object.entries(v)) {
      const c = clean(x);
      if (c !== undefined) o[k] = c;
    }
    return Object.keys(o).length ? o : undefined;
  }
  return v === '' || v === 0 || v === false || v === null ? undefined : v;
}
const metaView = (m: any) =>
  clean({
    name: m?.name,
    generateName: m?.generateName,
    namespace: m?.namespace,
    uid: m?.uid,
    resourceVersion: m?.resourceVersion,
    generation: m?.generation,
    creationTimestamp: m?.creationTimestamp,
    deletionTimestamp: m?.deletionTimestamp,
    labels: m?.labels,
    annotations: m?.annotations,
    finalizers: m?.finalizers,
  });

interface Kind {
  id: string;
  kind: string;
  apiVersion: string;
  collection: (ns: string) => string;
  make: (name: string) => any;
  /** a change of the kind's own fields, for update */
  change: (o: any) => void;
  patch: any;
  view: (o: any) => any;
  pbRead: (f: Fields) => any;
  pbWrite: (o: any) => Buffer;
}

const KINDS: Kind[] = [
  {
    id: 'cm',
    kind: 'ConfigMap',
    apiVersion: 'v1',
    collection: (ns) => `/api/v1/namespaces/${ns}/configmaps`,
    make: (name) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'matrix', tier: 'x' } }, data: { a: '1', b: 'two' } }),
    change: (o) => (o.data = { ...o.data, c: 'three' }),
    patch: { data: { patched: 'yes' } },
    view: (o) => clean({ metadata: metaView(o.metadata), data: o.data, immutable: o.immutable }),
    pbRead: (f) => {
      const c = pbConfigMap(f);
      return clean({ metadata: metaView(c.metadata), data: c.data, immutable: c.immutable });
    },
    pbWrite: (o) => Buffer.concat([fld(1, pbMetaBytes(o.metadata)), fmap(2, o.data)]),
  },
  {
    id: 'deploy',
    kind: 'Deployment',
    apiVersion: 'apps/v1',
    collection: (ns) => `/apis/apps/v1/namespaces/${ns}/deployments`,
    make: (name) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, labels: { app: 'matrix' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
      },
    }),
    change: (o) => (o.spec.replicas = 3),
    patch: { spec: { replicas: 5 } },
    view: (o) => {
      const s = o.spec;
      return clean({
        metadata: metaView(o.metadata),
        spec: s && {
          replicas: s.replicas,
          selector: { matchLabels: s.selector?.matchLabels },
          template: { metadata: { labels: s.template?.metadata?.labels }, spec: { containers: (s.template?.spec?.containers ?? []).map((c: any) => ({ name: c.name, image: c.image })) } },
          minReadySeconds: s.minReadySeconds,
          revisionHistoryLimit: s.revisionHistoryLimit,
          paused: s.paused,
          progressDeadlineSeconds: s.progressDeadlineSeconds,
        },
      });
    },
    pbRead: (f) => {
      const d = pbDeployment(f);
      return clean({ ...d, metadata: metaView(d.metadata) });
    },
    pbWrite: (o) => {
      const c = o.spec.template.spec.containers[0];
      const podSpec = fld(2, Buffer.concat([fstr(1, c.name), fstr(2, c.image)]));
      const tpl = Buffer.concat([fld(1, fmap(11, o.spec.template.metadata.labels)), fld(2, podSpec)]);
      const spec = Buffer.concat([fint(1, o.spec.replicas), fld(2, fmap(1, o.spec.selector.matchLabels)), fld(3, tpl)]);
      return Buffer.concat([fld(1, pbMetaBytes(o.metadata)), fld(2, spec)]);
    },
  },
];

// ---- the representations ----

type Shape = 'object' | 'list' | 'status';
interface Rep {
  id: string;
  /** Accept for one object and for a collection */
  accept: string;
  acceptList: string;
  /** the Content-Type the answer must carry */
  contentType: string;
  /** the request body in this representation, when it has one as input */
  body?: (k: Kind, o: any) => { body: Buffer; contentType: string };
  /** decode an answer into the comparable view; lists into their items' views */
  decode: (k: Kind, r: Buffer, shape: Shape) => Promise<any>;
  /** watch: the Accept, and the decoded events */
  watch?: { accept: string; contentType: string; events: (k: Kind, b: Buffer) => Promise<{ type: string; view: any }[]> };
}

const jsonView = (k: Kind, o: any, shape: Shape) => (shape === 'list' ? o.items.map(k.view) : shape === 'status' ? statusView(o) : k.view(o));
const statusView = (s: any) => ({ kind: s.kind, status: s.status, reason: s.reason ?? '', code: s.code || undefined });
const pomView = (o: any) => {
  assert.equal(o.kind, 'PartialObjectMetadata');
  assert.equal(o.apiVersion, 'meta.k8s.io/v1');
  assert.equal(o.spec, undefined);
  assert.equal(o.data, undefined);
  return metaView(o.metadata);
};
const pomlView = (o: any) => {
  assert.equal(o.kind, 'PartialObjectMetadataList');
  assert.equal(o.apiVersion, 'meta.k8s.io/v1');
  assert.ok(o.metadata.resourceVersion);
  return o.items.map(pomView);
};

function metadataRep(enc: 'json' | 'yaml' | 'protobuf' | 'cbor'): Rep {
  const mt = enc === 'json' ? 'application/json' : enc === 'yaml' ? 'application/yaml' : enc === 'protobuf' ? PB : 'application/cbor';
  const plain = async (b: Buffer): Promise<any> => (enc === 'json' ? JSON.parse(b.toString('utf8')) : enc === 'yaml' ? YAML.parse(b.toString('utf8')) : cborDecode(b));
  const decode = async (_k: Kind, b: Buffer, shape: Shape): Promise<any> => {
    if (enc === 'protobuf') {
      const u = pbUnknown(b);
      if (shape === 'status') return { kind: u.kind, ...pick(pbStatus(u.raw)) };
      assert.equal(u.apiVersion, 'meta.k8s.io/v1');
      if (shape === 'list') {
        assert.equal(u.kind, 'PartialObjectMetadataList');
        return pbList(u.raw, (i) => metaView(pbObjectMeta(msg(i, 1)))).items;
      }
      assert.equal(u.kind, 'PartialObjectMetadata');
      return metaView(pbObjectMeta(msg(fields(u.raw), 1)));
    }
    const o = await plain(b);
    return shape === 'list' ? pomlView(o) : shape === 'status' ? statusView(o) : pomView(o);
  };
  const rep: Rep = {
    id: `metadata-${enc}`,
    accept: `${mt};as=PartialObjectMetadata${META}`,
    acceptList: `${mt};as=PartialObjectMetadataList${META}`,
    contentType: mt,
    decode,
  };
  if (enc !== 'yaml') {
    rep.watch = {
      accept: `${mt};as=PartialObjectMetadata${META}`,
      contentType: enc === 'protobuf' ? `${PB};stream=watch` : enc === 'cbor' ? 'application/cbor-seq' : 'application/json',
      events: async (_k, b) => {
        if (enc === 'protobuf') return pbWatchEvents(b).map((e) => ({ type: e.type, view: metaView(pbObjectMeta(msg(fields(pbUnknown(e.object).raw), 1))) }));
        const evs = enc === 'cbor' ? await cborDecodeSequence(b) : jsonLines(b);
        return evs.map((e) => ({ type: e.type, view: pomView(e.object) }));
      },
    };
  }
  return rep;
}
const pick = (s: { status?: string; reason?: string; code?: number }) => ({ status: s.status, reason: s.reason ?? '', code: s.code || undefined });
const jsonLines = (b: Buffer) =>
  b
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim())
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return []; // an incomplete last line
      }
    });

function tableRep(enc: 'json' | 'yaml'): Rep {
  const mt = enc === 'json' ? 'application/json' : 'application/yaml';
  const parse = (b: Buffer) => (enc === 'json' ? JSON.parse(b.toString('utf8')) : YAML.parse(b.toString('utf8')));
  const rows = (t: any) => {
    assert.equal(t.kind, 'Table');
    assert.equal(t.apiVersion, 'meta.k8s.io/v1');
    assert.equal(t.columnDefinitions[0].name, 'Name');
    assert.equal(t.columnDefinitions[0].format, 'name');
    return t.rows.map((r: any) => {
      assert.equal(r.cells[0], r.object.metadata.name, 'the Name cell');
      assert.equal(r.cells.length, t.columnDefinitions.length);
      return pomView(r.object);
    });
  };
  const rep: Rep = {
    id: `table-${enc}`,
    accept: `${mt};as=Table${META}`,
    acceptList: `${mt};as=Table${META}`,
    contentType: mt,
    decode: async (_k, b, shape) => {
      const t = parse(b);
      if (shape === 'status') return statusView(t);
      const r = rows(t);
      if (shape === 'list') return r;
      assert.equal(r.length, 1);
      assert.equal(t.metadata.resourceVersion, r[0].resourceVersion, "a single object's Table carries its resourceVersion");
      return r[0];
    },
  };
  if (enc === 'json') {
    rep.watch = {
      accept: `application/json;as=Table${META}`,
      contentType: 'application/json',
      events: async (_k, b) => jsonLines(b).map((e) => ({ type: e.type, view: rows(e.object)[0] })),
    };
  }
  return rep;
}

const REPS: Rep[] = [
  {
    id: 'json',
    accept: 'application/json',
    acceptList: 'application/json',
    contentType: 'application/json',
    body: (_k, o) => ({ body: Buffer.from(JSON.stringify(o)), contentType: 'application/json' }),
    decode: async (k, b, shape) => jsonView(k, JSON.parse(b.toString('utf8')), shape),
    watch: { accept: 'application/json', contentType: 'application/json', events: async (k, b) => jsonLines(b).map((e) => ({ type: e.type, view: k.view(e.object) })) },
  },
  {
    id: 'yaml',
    accept: 'application/yaml',
    acceptList: 'application/yaml',
    contentType: 'application/yaml',
    body: (_k, o) => ({ body: Buffer.from(YAML.stringify(o)), contentType: 'application/yaml' }),
    decode: async (k, b, shape) => jsonView(k, YAML.parse(b.toString('utf8')), shape),
  },
  {
    id: 'protobuf',
    accept: PB,
    acceptList: PB,
    contentType: PB,
    body: (k, o) => ({ body: pbEnvelope(k.apiVersion, k.kind, k.pbWrite(o)), contentType: PB }),
    decode: async (k, b, shape) => {
      const u = pbUnknown(b);
      if (shape === 'status') {
        assert.equal(u.kind, 'Status');
        return { kind: 'Status', ...pick(pbStatus(u.raw)) };
      }
      assert.equal(u.apiVersion, k.apiVersion);
      if (shape === 'list') {
        assert.equal(u.kind, `${k.kind}List`);
        return pbList(u.raw, k.pbRead).items;
      }
      assert.equal(u.kind, k.kind);
      return k.pbRead(fields(u.raw));
    },
    watch: {
      accept: PB,
      contentType: `${PB};stream=watch`,
      events: async (k, b) => pbWatchEvents(b).map((e) => ({ type: e.type, view: k.pbRead(fields(pbUnknown(e.object).raw)) })),
    },
  },
  {
    id: 'cbor',
    accept: 'application/cbor',
    acceptList: 'application/cbor',
    contentType: 'application/cbor',
    body: (_k, o) => ({ body: Buffer.from(cborEncodeSync(o)), contentType: 'application/cbor' }),
    decode: async (k, b, shape) => jsonView(k, await cborDecode(b), shape),
    watch: {
      accept: 'application/cbor',
      contentType: 'application/cbor-seq',
      events: async (k, b) => (await cborDecodeSequence(b)).map((e) => ({ type: e.type, view: k.view(e.object) })),
    },
  },
  tableRep('json'),
  tableRep('yaml'),
  metadataRep('json'),
  metadataRep('yaml'),
  metadataRep('protobuf'),
  metadataRep('cbor'),
];

let cborEncode: ((o: any) => Uint8Array) | undefined;
const cborEncodeSync = (o: any) => cborEncode!(o);

let c: Cluster;

before(async () => {
  cborEncode = (await cborgP).encode;
  // (the workload controllers off too: a Deployment's revision annotation or a ReplicaSet's pods,
  // written while the matrix reads, would make the encodings' reads differ by timing)
  c = await startCluster({ args: ['--controllers=*,-root-ca-certificate-publisher-controller,-deployment-controller,-replicaset-controller,-replicationcontroller-controller,-statefulset-controller', '--storage-backend=memory', '--feature-gates=CBORServingAndStorage=true'] });
  for (const r of REPS) {
    const ns = await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `m-${r.id}` } } });
    assert.equal(ns.status, 201, ns.text);
  }
});
after(async () => {
  await c?.stop();
});

/** the decoded answer equals the JSON form's view, which must name an object (an empty view would prove nothing) */
function same(actual: any, expected: any, what: string): void {
  const names = (v: any): string[] => (Array.isArray(v) ? v.flatMap(names) : v?.kind === 'Status' ? ['Status'] : [v?.metadata?.name ?? v?.name].filter(Boolean));
  assert.ok(names(expected).length > 0 && names(expected).every((n) => n), `${what}: nothing to compare in ${JSON.stringify(expected)}`);
  assert.deepEqual(actual, expected, what);
  if (process.env.MATRIX_DEBUG) console.log(what, JSON.stringify(actual));
}

function ok(r: RawResponse, code: number, contentType: string, what: string): void {
  assert.equal(r.status, code, `${what}: ${r.status} ${r.text.slice(0, 400)}`);
  assert.equal(r.headers['content-type'], contentType, `${what}: Content-Type`);
}

async function jsonGet(path: string): Promise<any> {
  const r = await c.raw('GET', path);
  assert.equal(r.status, 200, r.text);
  return r.json();
}

async function until<T>(f: () => Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const k of KINDS) {
  describe(`${k.kind}: every verb in every representation`, () => {
    for (const rep of REPS) {
      test(rep.id, async () => {
        const ns = `m-${rep.id}`;
        const col = k.collection(ns);
        const item = (n: string) => `${col}/${n}`;
        const what = (verb: string) => `${k.kind} ${verb} as ${rep.id}`;

        // create: the body in this representation where it is an input encoding, else JSON
        const obj = k.make(`${k.id}-a`);
        const input = rep.body ? rep.body(k, obj) : { body: Buffer.from(JSON.stringify(obj)), contentType: 'application/json' };
        const cr = await c.raw('POST', col, { body: input.body, headers: { 'content-type': input.contentType, accept: rep.accept } });
        ok(cr, 201, rep.contentType, what('create'));
        // what the answer must hold: the JSON form's view (its metadata, for Table rows and metadata-only forms)
        const expectOne = async (name: string) => {
          const j = await jsonGet(item(name));
          return rep.id.startsWith('table') || rep.id.startsWith('metadata') ? metaView(j.metadata) : k.view(j);
        };
        same(await rep.decode(k, cr.body, 'object'), await expectOne(obj.metadata.name), what('create'));

        // a second object, created in JSON, so that lists have two items
        const b = k.make(`${k.id}-b`);
        assert.equal((await c.raw('POST', col, { body: b })).status, 201);

        // get
        const g = await c.raw('GET', item(obj.metadata.name), { headers: { accept: rep.accept } });
        ok(g, 200, rep.contentType, what('get'));
        same(await rep.decode(k, g.body, 'object'), await expectOne(obj.metadata.name), what('get'));
        if (rep.id === 'yaml') assert.deepEqual(YAML.parse(g.text), await jsonGet(item(obj.metadata.name)), 'YAML equals JSON in full');

        // list
        const l = await c.raw('GET', col, { headers: { accept: rep.acceptList } });
        ok(l, 200, rep.contentType, what('list'));
        const jl = await jsonGet(col);
        const want = jl.items.map((i: any) => (rep.id.startsWith('table') || rep.id.startsWith('metadata') ? metaView(i.metadata) : k.view(i)));
        same(await rep.decode(k, l.body, 'list'), want, what('list'));

        // update: the body in this representation where it has one
        const cur = await jsonGet(item(obj.metadata.name));
        k.change(cur);
        const upBody = rep.body ? rep.body(k, cur) : { body: Buffer.from(JSON.stringify(cur)), contentType: 'application/json' };
        const up = await c.raw('PUT', item(obj.metadata.name), { body: upBody.body, headers: { 'content-type': upBody.contentType, accept: rep.accept } });
        ok(up, 200, rep.contentType, what('update'));
        const afterUp = await expectOne(obj.metadata.name);
        same(await rep.decode(k, up.body, 'object'), afterUp, what('update'));
        assert.notEqual(afterUp.metadata?.resourceVersion ?? afterUp.resourceVersion, cur.metadata.resourceVersion, 'the update was stored');

        // watch: from the list's version, one change, the event decoded
        if (rep.watch) {
          const rv = (await jsonGet(col)).metadata.resourceVersion;
          const w = c.stream(`${col}?watch=1&resourceVersion=${rv}`, { accept: rep.watch.accept });
          await w.ready;
          try {
            assert.equal(w.status, 200);
            assert.equal(w.headers['content-type'], rep.watch.contentType, what('watch'));
            const pr = await c.raw('PATCH', item(obj.metadata.name), { body: JSON.stringify(k.patch), headers: { 'content-type': 'application/merge-patch+json' } });
            assert.equal(pr.status, 200, pr.text);
            const evs = await until(async () => {
              const e = await rep.watch!.events(k, Buffer.concat(w.chunks));
              return e.length ? e : undefined;
            }, what('watch'));
            assert.equal(evs[0]!.type, 'MODIFIED');
            same(evs[0]!.view, await expectOne(obj.metadata.name), what('watch'));
          } finally {
            w.close();
          }
        } else {
          // YAML has no stream framing: a watch asking only for it is 406, naming the stream types
          const wr = await c.raw('GET', `${col}?watch=1&timeoutSeconds=1`, { headers: { accept: rep.accept } });
          assert.equal(wr.status, 406, what('watch'));
          assert.match(wr.text, /application\/json;stream=watch, application\/vnd\.kubernetes\.protobuf;stream=watch, application\/cbor-seq/);
        }

        // patch
        const pa = await c.raw('PATCH', item(obj.metadata.name), { body: JSON.stringify(k.patch), headers: { 'content-type': 'application/merge-patch+json', accept: rep.accept } });
        ok(pa, 200, rep.contentType, what('patch'));
        same(await rep.decode(k, pa.body, 'object'), await expectOne(obj.metadata.name), what('patch'));

        // delete of an object held by a finalizer: the object comes back, with deletionTimestamp
        const held = k.make(`${k.id}-held`);
        held.metadata.finalizers = ['example.com/hold'];
        assert.equal((await c.raw('POST', col, { body: held })).status, 201);
        const dh = await c.raw('DELETE', item(held.metadata.name), { headers: { accept: rep.accept } });
        ok(dh, 200, rep.contentType, what('delete (held)'));
        const heldNow = await expectOne(held.metadata.name);
        assert.ok((heldNow.metadata ?? heldNow).deletionTimestamp, 'marked for deletion');
        same(await rep.decode(k, dh.body, 'object'), heldNow, what('delete (held)'));
        const rel = await c.raw('PATCH', item(held.metadata.name), { body: '{"metadata":{"finalizers":null}}', headers: { 'content-type': 'application/merge-patch+json' } });
        assert.equal(rel.status, 200, rel.text);

        // delete that removes at once: a Status, in this encoding (a Table or metadata-only ask gets the Status as is)
        const d = await c.raw('DELETE', item(obj.metadata.name), { headers: { accept: rep.accept } });
        ok(d, 200, rep.contentType, what('delete'));
        const st = rep.id.startsWith('table') || rep.id.startsWith('metadata')
          ? await metadataStatus(rep, d.body)
          : await rep.decode(k, d.body, 'status');
        same(st, { kind: 'Status', status: 'Success', reason: '', code: undefined }, what('delete'));
        assert.equal((await c.raw('GET', item(obj.metadata.name))).status, 404);
      });
    }
  });
}

/** a Status answered to a Table or metadata-only ask, in that ask's encoding */
async function metadataStatus(rep: Rep, b: Buffer): Promise<any> {
  if (rep.contentType === PB) {
    const u = pbUnknown(b);
    return { kind: u.kind, ...pick(pbStatus(u.raw)) };
  }
  const o = rep.contentType === 'application/cbor' ? await cborDecode(b) : rep.contentType === 'application/yaml' ? YAML.parse(b.toString('utf8')) : JSON.parse(b.toString('utf8'));
  return statusView(o);
}

describe('negotiation (Media types and content negotiation)', () => {
  const cms = '/api/v1/namespaces/m-json/configmaps';
  const one = `${cms}/neg`;
  before(async () => {
    const r = await c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'neg' }, data: { k: 'v' } } });
    assert.equal(r.status, 201, r.text);
  });
  const typeOf = async (accept: string, path = one) => {
    const r = await c.raw('GET', path, { headers: { accept } });
    assert.equal(r.status, 200, `${accept}: ${r.text.slice(0, 300)}`);
    return r.headers['content-type'];
  };

  test('Accept lists: q values order them, the first supported one wins, wildcards mean JSON', async () => {
    assert.equal(await typeOf(`${PB}, application/json`), PB);
    assert.equal(await typeOf(`${PB};q=0.5, application/json`), 'application/json');
    assert.equal(await typeOf('application/json;q=0.4, application/yaml;q=0.8'), 'application/yaml');
    assert.equal(await typeOf('text/html, application/xml, application/yaml'), 'application/yaml');
    assert.equal(await typeOf('text/html, */*'), 'application/json');
    assert.equal(await typeOf('application/*'), 'application/json');
    assert.equal(await typeOf('application/cbor, application/json'), 'application/cbor');
    // the media type's own parameters other than as/g/v do not matter
    assert.equal(await typeOf('application/json;charset=utf-8'), 'application/json');
  });

  test('406 when nothing listed is served, naming what is', async () => {
    for (const accept of ['text/html', 'application/xml, text/plain', `application/json;as=Table;g=meta.k8s.io;v=v9`, 'application/json;as=Widget;g=meta.k8s.io;v=v1', 'application/json;as=Table']) {
      const r = await c.raw('GET', one, { headers: { accept } });
      const s = expectStatus(r, 406, 'NotAcceptable', accept);
      assert.equal(s.message, 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor');
    }
  });

  test('Table only in JSON and YAML: a Protobuf or CBOR Table ask is 406, or full objects with a fallback', async () => {
    for (const mt of [PB, 'application/cbor']) {
      expectStatus(await c.raw('GET', one, { headers: { accept: `${mt};as=Table${META}` } }), 406, 'NotAcceptable', mt);
      assert.equal(await typeOf(`${mt};as=Table${META}, ${mt}`), mt);
    }
    const t = await c.raw('GET', one, { headers: { accept: `${PB};as=Table${META}, application/json;as=Table${META}, application/json` } });
    assert.equal(t.json().kind, 'Table', 'the first clause that applies: the JSON Table');
  });

  test('a Table-only ask on a kind without a Table form is 406; with a fallback, the full object', async () => {
    const ssr = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
    const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
    expectStatus(await c.raw('POST', ssr, { body, headers: { accept: `application/json;as=Table${META}` } }), 406, 'NotAcceptable');
    const r = await c.raw('POST', ssr, { body, headers: { accept: `application/json;as=Table${META}, application/json;q=0.5` } });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.json().kind, 'SelfSubjectReview');
    assert.equal(r.json().status.userInfo.username, 'kubernetes-admin');
    // the metadata-only form it has
    const m = await c.raw('POST', ssr, { body, headers: { accept: `application/json;as=PartialObjectMetadata${META}` } });
    assert.equal(m.status, 201, m.text);
    assert.equal(m.json().kind, 'PartialObjectMetadata');
  });

  test('the metadata-only list form asked of one object: 406, alone or with a fallback (kube-apiserver takes the first metadata-only clause whatever its shape)', async () => {
    expectStatus(await c.raw('GET', one, { headers: { accept: `application/json;as=PartialObjectMetadataList${META}` } }), 406, 'NotAcceptable');
    expectStatus(await c.raw('GET', one, { headers: { accept: `application/json;as=PartialObjectMetadataList${META}, application/json` } }), 406, 'NotAcceptable');
  });

  test('415 for a request body in a type the endpoint does not take', async () => {
    const bad: [string, string, string][] = [
      ['POST', cms, 'text/plain'],
      ['POST', cms, 'application/merge-patch+json'],
      ['POST', cms, 'application/cbor-seq'],
      ['PUT', one, 'application/xml'],
      ['PATCH', one, 'application/json'],
      ['PATCH', one, 'text/plain'],
    ];
    for (const [method, path, ct] of bad) {
      const r = await c.raw(method, path, { body: '{}', headers: { 'content-type': ct } });
      const s = expectStatus(r, 415, 'UnsupportedMediaType', `${method} ${ct}`);
      assert.match(s.message, /^the body of the request was in an unknown format - accepted media types include: /);
    }
  });

  test('a Protobuf body needs the k8s\\0 prefix (400 without it); with it, it is read', async () => {
    const cm = { metadata: { name: 'pb-in', labels: { a: 'b' } }, data: { x: 'y' } };
    const raw = KINDS[0]!.pbWrite(cm);
    const env = pbEnvelope('v1', 'ConfigMap', raw);
    const noPrefix = await c.raw('POST', cms, { body: env.subarray(4), headers: { 'content-type': PB } });
    expectStatus(noPrefix, 400, 'BadRequest', 'no prefix');
    const wrongPrefix = await c.raw('POST', cms, { body: Buffer.concat([Buffer.from('k9s\0', 'latin1'), env.subarray(4)]), headers: { 'content-type': PB } });
    expectStatus(wrongPrefix, 400, 'BadRequest', 'wrong prefix');
    const bare = await c.raw('POST', cms, { body: raw, headers: { 'content-type': PB } });
    expectStatus(bare, 400, 'BadRequest', 'a bare message');
    assert.equal((await c.raw('GET', `${cms}/pb-in`)).status, 404, 'nothing was created');
    const good = await c.raw('POST', cms, { body: env, headers: { 'content-type': PB } });
    assert.equal(good.status, 201, good.text);
    assert.equal(good.headers['content-type'], 'application/json', 'the answer in the default type: no Accept');
    assert.deepEqual(good.json().data, { x: 'y' });
  });

  test('errors in the negotiated encoding: a Protobuf Status and a CBOR Status', async () => {
    const p = await c.raw('GET', `${cms}/nope`, { headers: { accept: PB } });
    assert.equal(p.status, 404);
    assert.equal(p.headers['content-type'], PB);
    const u = pbUnknown(p.body);
    assert.deepEqual({ apiVersion: u.apiVersion, kind: u.kind }, { apiVersion: 'v1', kind: 'Status' });
    assert.deepEqual(pbStatus(u.raw), { status: 'Failure', message: 'configmaps "nope" not found', reason: 'NotFound', code: 404 });
    const cb = await c.raw('GET', `${cms}/nope`, { headers: { accept: 'application/cbor' } });
    assert.equal(cb.headers['content-type'], 'application/cbor');
    const s = await cborDecode(cb.body);
    assert.deepEqual({ kind: s.kind, reason: s.reason, code: s.code }, { kind: 'Status', reason: 'NotFound', code: 404 });
  });
});

describe('Tables: includeObject, and the default table', () => {
  const cms = '/api/v1/namespaces/m-json/configmaps';
  test('includeObject=None|Metadata|Object on get and list; a bad value is 400', async () => {
    await c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'inc' }, data: { k: 'v' } } });
    const accept = `application/json;as=Table${META}`;
    for (const path of [`${cms}/inc`, `${cms}?fieldSelector=metadata.name%3Dinc`]) {
      const none = (await c.raw('GET', `${path}${path.includes('?') ? '&' : '?'}includeObject=None`, { headers: { accept } })).json();
      assert.equal(none.rows[0].object, undefined);
      const md = (await c.raw('GET', path, { headers: { accept } })).json();
      assert.equal(md.rows[0].object.kind, 'PartialObjectMetadata', 'Metadata is the default');
      const full = (await c.raw('GET', `${path}${path.includes('?') ? '&' : '?'}includeObject=Object`, { headers: { accept } })).json();
      assert.equal(full.rows[0].object.kind, 'ConfigMap');
      assert.deepEqual(full.rows[0].object.data, { k: 'v' });
      assert.deepEqual(full.rows[0].cells.slice(0, 2), ['inc', 1]);
    }
    const bad = await c.raw('GET', `${cms}/inc?includeObject=Everything`, { headers: { accept } });
    assert.equal(expectStatus(bad, 400, 'BadRequest').message, `Unable to convert to Table as requested: includeObject: Invalid value: "Everything": must be 'Metadata', 'Object', 'None', or empty`);
  });

  test('a metadata-only clause of the wrong shape is taken and fails with 406, as in Kubernetes (not skipped for the next clause)', async () => {
    await c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shape' } } });
    const one = await c.raw('GET', `${cms}/shape`, { headers: { accept: `application/json;as=PartialObjectMetadataList${META}, application/json` } });
    assert.equal(expectStatus(one, 406, 'NotAcceptable').message, 'you requested PartialObjectMetadataList, but the requested object is not a list (*v1.ConfigMap)');
    const list = await c.raw('GET', `${cms}?limit=1`, { headers: { accept: `application/json;as=PartialObjectMetadata${META}, application/json` } });
    assert.equal(expectStatus(list, 406, 'NotAcceptable').message, 'you requested PartialObjectMetadata, but the requested object is a list (*v1.ConfigMapList)');
  });

  test('a watch as Table: only the first event carries the column definitions', async () => {
    const accept = `application/json;as=Table${META}`;
    const rv = (await c.raw('GET', cms)).json().metadata.resourceVersion;
    const w = c.stream(`${cms}?watch=true&resourceVersion=${rv}`, { accept });
    await w.ready;
    for (const n of ['tw1', 'tw2']) await c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n } } });
    const evs = await w.until((e) => e.length >= 2);
    w.close();
    assert.deepEqual(evs.map((e) => e.object.rows[0].cells[0]), ['tw1', 'tw2']);
    assert.equal(evs[0].object.columnDefinitions[0].name, 'Name');
    assert.equal(evs[1].object.columnDefinitions, null);
  });

  test('FlowSchemas as a Table are in the order they are tried (matching precedence, then name), as kubectl shows them', async () => {
    const t = (await c.raw('GET', '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas', { headers: { accept: `application/json;as=Table${META}` } })).json();
    const rows = t.rows.map((r: any) => [r.cells[2], r.cells[0]]);
    assert.deepEqual(rows.slice(0, 2), [[1, 'exempt'], [2, 'probes']]);
    assert.deepEqual(rows.at(-1), [10000, 'catch-all']);
    const sorted = [...rows].sort((a: any, b: any) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1));
    assert.deepEqual(rows, sorted);
  });

  test('a kind without a printer of its own: Name and Created At', async () => {
    const r = await c.raw('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/admin', { headers: { accept: `application/json;as=Table${META}` } });
    const t = r.json();
    assert.deepEqual(
      t.columnDefinitions.map((d: any) => [d.name, d.type, d.format]),
      [
        ['Name', 'string', 'name'],
        ['Created At', 'date', ''],
      ],
    );
    assert.equal(t.rows[0].cells[0], 'admin');
    assert.match(t.rows[0].cells[1], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });
});

describe('compression', () => {
  const cms = '/api/v1/namespaces/m-yaml/configmaps';
  const THRESHOLD = 128 * 1024;

  /** a ConfigMap whose JSON GET answer is exactly `size` bytes */
  async function sized(name: string, size: number): Promise<void> {
    let pad = size - 300;
    const create = await c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: 'x'.repeat(pad) } } });
    assert.equal(create.status, 201, create.text);
    for (let i = 0; i < 5; i++) {
      const len = (await c.raw('GET', `${cms}/${name}`)).body.length;
      if (len === size) return;
      pad += size - len;
      const u = await c.raw('PATCH', `${cms}/${name}`, { body: JSON.stringify({ data: { v: 'x'.repeat(pad) } }), headers: { 'content-type': 'application/merge-patch+json' } });
      assert.equal(u.status, 200, u.text);
    }
    throw new Error(`could not size ${name} to ${size} bytes`);
  }

  test("get: gzip above Kubernetes' threshold (more than 128 KiB), not at it", async () => {
    await sized('at', THRESHOLD);
    await sized('over', THRESHOLD + 1);
    const at = await c.raw('GET', `${cms}/at`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(at.headers['content-encoding'], undefined);
    assert.equal(at.body.length, THRESHOLD);
    const over = await c.raw('GET', `${cms}/over`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(over.headers['content-encoding'], 'gzip');
    assert.equal(over.headers['vary'], 'Accept-Encoding');
    const plain = zlib.gunzipSync(over.body);
    assert.equal(plain.length, THRESHOLD + 1);
    assert.deepEqual(JSON.parse(plain.toString('utf8')), (await c.raw('GET', `${cms}/over`)).json());
    // the token must be gzip itself; other codings, or none, are not compressed
    for (const ae of ['deflate, br', 'identity', 'gzip;q=1.0']) {
      assert.equal((await c.raw('GET', `${cms}/over`, { headers: { 'accept-encoding': ae } })).headers['content-encoding'], undefined, ae);
    }
    assert.equal((await c.raw('GET', `${cms}/over`, { headers: { 'accept-encoding': 'deflate, gzip' } })).headers['content-encoding'], 'gzip');
    // Protobuf too (a larger object: the Protobuf form is shorter than the JSON one)
    await sized('huge', 200 * 1024);
    const pb = await c.raw('GET', `${cms}/huge`, { headers: { 'accept-encoding': 'gzip', accept: PB } });
    assert.equal(pb.headers['content-encoding'], 'gzip');
    assert.equal(pbUnknown(zlib.gunzipSync(pb.body)).kind, 'ConfigMap');
  });

  test('list: gzip in JSON, YAML and Protobuf, and the same items as uncompressed', async () => {
    for (const accept of ['application/json', 'application/yaml', PB]) {
      const z = await c.raw('GET', cms, { headers: { 'accept-encoding': 'gzip', accept } });
      assert.equal(z.status, 200);
      assert.equal(z.headers['content-encoding'], 'gzip', accept);
      const plain = await c.raw('GET', cms, { headers: { accept } });
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.ok(plain.body.length > THRESHOLD);
      const unz = zlib.gunzipSync(z.body);
      // (the items: the list's resourceVersion moves with any write in the cluster between the two)
      if (accept === PB) assert.deepEqual(pbList(pbUnknown(unz).raw, KINDS[0]!.pbRead).items, pbList(pbUnknown(plain.body).raw, KINDS[0]!.pbRead).items);
      else assert.deepEqual(YAML.parse(unz.toString('utf8')).items, YAML.parse(plain.text).items);
    }
  });

  test('watch streams are not compressed', async () => {
    const w = c.stream(`${cms}?watch=1`, { 'accept-encoding': 'gzip' });
    await w.ready;
    try {
      assert.equal(w.headers['content-encoding'], undefined);
      await until(async () => (jsonLines(Buffer.concat(w.chunks)).length >= 2 ? true : undefined), 'two ADDED events');
    } finally {
      w.close();
    }
  });
});

describe('pretty', () => {
  const one = '/api/v1/namespaces/m-json/configmaps/neg';
  test('pretty=true indents JSON by two spaces (no final newline); pretty=false and no UA: compact', async () => {
    const p = await c.raw('GET', `${one}?pretty=true`);
    const obj = JSON.parse(p.text);
    assert.equal(p.text, JSON.stringify(obj, null, 2));
    assert.equal((await c.raw('GET', `${one}?pretty=1`)).text, p.text);
    const compact = await c.raw('GET', one);
    assert.equal(compact.text, JSON.stringify(obj));
    assert.equal((await c.raw('GET', `${one}?pretty=false`, { headers: { 'user-agent': 'curl/8.5.0' } })).text, compact.text);
    // the pretty=1 parameter of the media type
    assert.equal((await c.raw('GET', one, { headers: { accept: 'application/json;pretty=1' } })).text, p.text);
    // lists, and Tables
    const l = await c.raw('GET', '/api/v1/namespaces/m-json/configmaps?pretty=true');
    assert.equal(l.text, JSON.stringify(JSON.parse(l.text), null, 2));
    assert.ok(l.text.includes('\n  "items": [\n'));
    const t = await c.raw('GET', `${one}?pretty=true`, { headers: { accept: `application/json;as=Table${META}` } });
    assert.equal(t.text, JSON.stringify(JSON.parse(t.text), null, 2));
  });
  test('curl, Wget and browsers get indented JSON without asking, as from kube-apiserver', async () => {
    for (const ua of ['curl/8.5.0', 'Wget/1.21', 'Mozilla/5.0 (X11; Linux x86_64)']) {
      const r = await c.raw('GET', one, { headers: { 'user-agent': ua } });
      assert.equal(r.text, JSON.stringify(JSON.parse(r.text), null, 2), ua);
    }
    const k = await c.raw('GET', one, { headers: { 'user-agent': 'kubectl/v1.33.0 (linux/amd64) kubernetes/abcdef' } });
    assert.ok(!k.text.includes('\n'));
  });
  test('errors too: a Status is indented for pretty=true and for curl, and always when no Accept type fits', async () => {
    const missing = '/api/v1/namespaces/m-json/configmaps/missing';
    const indented = (r: RawResponse) => r.text === JSON.stringify(JSON.parse(r.text), null, 2);
    const p = await c.raw('GET', `${missing}?pretty=true`);
    assert.equal(p.status, 404);
    assert.ok(indented(p));
    assert.ok(indented(await c.raw('GET', missing, { headers: { 'user-agent': 'curl/8.5.0' } })));
    assert.ok(!(await c.raw('GET', missing)).text.includes('\n'));
    const na = await c.raw('GET', missing, { headers: { accept: 'text/html' } });
    assert.equal(na.status, 406);
    assert.equal(na.headers['content-type'], 'application/json');
    assert.ok(indented(na), 'a Status that cannot be negotiated is written as indented JSON');
  });
});

describe('large lists, written item by item', () => {
  const cms = '/api/v1/namespaces/m-table-yaml/configmaps';
  test('1,500 ConfigMaps (~600 KB): JSON and Protobuf lists written item by item decode to the same items, gzipped too', async () => {
    const n = 1500;
    const data = { v: 'y'.repeat(300) };
    for (let i = 0; i < n; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, n - i) }, (_, j) => c.raw('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${String(i + j).padStart(5, '0')}` }, data } })),
      );
    }
    const j = await c.raw('GET', `${cms}?labelSelector=`);
    assert.equal(j.status, 200);
    const list = j.json();
    const names = list.items.map((i: any) => i.metadata.name).filter((x: string) => x.startsWith('big-'));
    assert.equal(names.length, n);
    assert.ok(j.body.length > 512 * 1024);
    assert.equal(Number(j.headers['content-length']), j.body.length, 'JSON: sizes known up front');
    const p = await c.raw('GET', cms, { headers: { accept: PB } });
    assert.equal(Number(p.headers['content-length']), p.body.length, 'Protobuf: sizes known up front');
    const pl = pbList(pbUnknown(p.body).raw, KINDS[0]!.pbRead);
    assert.ok(Number(pl.resourceVersion) >= Number(list.metadata.resourceVersion), 'the list resourceVersion (later writes elsewhere move it)');
    assert.deepEqual(pl.items, list.items.map(KINDS[0]!.view));
    const z = await c.raw('GET', cms, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(z.headers['content-encoding'], 'gzip');
    assert.deepEqual(JSON.parse(zlib.gunzipSync(z.body).toString('utf8')).items, list.items);
    // over HTTP/2 too, plain and gzipped
    const session = c.http2Session();
    try {
      for (const gzip of [false, true]) {
        const body = await new Promise<Buffer>((resolve, reject) => {
          const req = session.request({ ':method': 'GET', ':path': cms, ...(gzip ? { 'accept-encoding': 'gzip' } : {}) });
          const chunks: Buffer[] = [];
          let enc: unknown;
          req.on('response', (h) => (enc = h['content-encoding']));
          req.on('data', (d: Buffer) => chunks.push(d));
          req.on('end', () => resolve(enc === 'gzip' ? zlib.gunzipSync(Buffer.concat(chunks)) : Buffer.concat(chunks)));
          req.on('error', reject);
          req.end();
        });
        assert.deepEqual(JSON.parse(body.toString('utf8')).items, list.items, `HTTP/2${gzip ? ', gzip' : ''}`);
      }
    } finally {
      session.close();
    }
  });
});

describe('every built-in kind: lists in Protobuf, CBOR and the metadata-only Protobuf form, Protobuf watches', () => {
  test('each served resource lists the same objects in every encoding as in JSON', async () => {
    const made = c.kubectl(['create', '-f', '-'], { input: everyKindManifest('every', 'keelson-every=yes', certificateRequestPEM()) });
    assert.equal(made.code, 0, `${made.stdout}\n${made.stderr}`);
    // a custom resource of the fixture's CustomResourceDefinition, once its API is served
    await until(async () => {
      const w = await c.raw('POST', '/apis/tables.example.com/v1/namespaces/every/widgets', {
        body: { apiVersion: 'tables.example.com/v1', kind: 'Widget', metadata: { name: 'w1', labels: { 'keelson-every': 'yes' } } },
      });
      return w.status === 201 ? true : undefined;
    }, 'the Widget API');
    // every group version the server serves, from discovery, and each listable resource of it
    const gvs = ['/api/v1', ...((await c.raw('GET', '/apis')).json().groups as any[]).flatMap((g) => g.versions.map((v: any) => `/apis/${v.groupVersion}`))];
    let resources = 0;
    let objects = 0;
    const watches: Promise<void>[] = [];
    const watchCheck = async (path: string, want: any[], what: string) => {
      const w = await c.raw('GET', path, { headers: { accept: PB } });
      assert.equal(w.status, 200, `${what} watch`);
      assert.equal(w.headers['content-type'], `${PB};stream=watch`, what);
      const evs = pbWatchEvents(w.body);
      assert.ok(evs.every((e) => e.type === 'ADDED'), what);
      const got = evs.map((e) => metaView(pbObjectMeta(msg(fields(pbUnknown(e.object).raw), 1))));
      const key = (v: any) => `${v.namespace ?? ''}/${v.name}`;
      assert.deepEqual(got.map(key).sort(), want.map(key).sort(), `${what} watch`);
    };
    for (const gv of gvs) {
      const rl = (await c.raw('GET', gv)).json();
      for (const res of rl.resources as any[]) {
        // component statuses are computed, not stored: they carry no labels to select them by
        if (res.name.includes('/') || !res.verbs.includes('list') || res.name === 'componentstatuses') continue;
        resources++;
        const path = `${gv}${res.namespaced ? '/namespaces/every' : ''}/${res.name}?labelSelector=keelson-every%3Dyes`;
        const what = `${gv} ${res.name}`;
        const j = await c.raw('GET', path);
        assert.equal(j.status, 200, `${what}: ${j.text.slice(0, 300)}`);
        const want = (j.json().items as any[]).map((i) => metaView(i.metadata));
        objects += want.length;
        const apiVersion = rl.groupVersion;
        if (gv.startsWith('/apis/tables.example.com/')) {
          // the fixture's CustomResourceDefinition: custom resources have no Protobuf form (406,
          // or the JSON fallback), but their metadata-only lists are served in Protobuf
          expectStatus(await c.raw('GET', path, { headers: { accept: PB } }), 406, 'NotAcceptable', what);
          assert.equal((await c.raw('GET', path, { headers: { accept: `${PB}, application/json` } })).headers['content-type'], 'application/json');
          const m = await c.raw('GET', path, { headers: { accept: `${PB};as=PartialObjectMetadataList${META}` } });
          assert.equal(m.status, 200, `${what} metadata`);
          assert.deepEqual(pbList(pbUnknown(m.body).raw, (f) => metaView(pbObjectMeta(msg(f, 1)))).items, want, `${what} metadata-only`);
          continue;
        }
        // (metrics.k8s.io, the built-in Resource Metrics API, answers as metrics-server does: its
        // lists in Protobuf (k8s.io/metrics' messages) and CBOR, and the metadata-only Protobuf
        // form, like every built-in kind; it has no watch)
        // Protobuf: the list kind, and each item's ObjectMeta (field 1 of every kind)
        const p = await c.raw('GET', path, { headers: { accept: PB } });
        assert.equal(p.status, 200, `${what} protobuf: ${p.text.slice(0, 300)}`);
        assert.equal(p.headers['content-type'], PB, what);
        const u = pbUnknown(p.body);
        assert.deepEqual({ apiVersion: u.apiVersion, kind: u.kind }, { apiVersion, kind: `${res.kind}List` }, what);
        assert.deepEqual(pbList(u.raw, (f) => metaView(pbObjectMeta(msg(f, 1)))).items, want, `${what} protobuf`);
        // CBOR, read by cborg
        const cb = await c.raw('GET', path, { headers: { accept: 'application/cbor' } });
        assert.equal(cb.status, 200, `${what} cbor`);
        const cl = await cborDecode(cb.body);
        assert.equal(cl.kind, `${res.kind}List`, what);
        assert.deepEqual((cl.items as any[]).map((i) => metaView(i.metadata)), want, `${what} cbor`);
        // a Protobuf watch from resourceVersion 0: the ADDED events of the same objects, in frames
        if (res.verbs.includes('watch')) watches.push(watchCheck(`${path}&watch=1&resourceVersion=0&timeoutSeconds=1`, want, what));
        // the metadata-only list, in Protobuf
        const m = await c.raw('GET', path, { headers: { accept: `${PB};as=PartialObjectMetadataList${META}` } });
        assert.equal(m.status, 200, `${what} metadata`);
        const mu = pbUnknown(m.body);
        assert.equal(mu.kind, 'PartialObjectMetadataList', what);
        assert.deepEqual(pbList(mu.raw, (f) => metaView(pbObjectMeta(msg(f, 1)))).items, want, `${what} metadata-only`);
      }
    }
    await Promise.all(watches);
    assert.ok(watches.length >= 45, `watched resources: ${watches.length}`);
    assert.ok(resources >= 50, `listable resources: ${resources}`);
    assert.ok(objects >= 50, `objects compared: ${objects}`);
  });
});
