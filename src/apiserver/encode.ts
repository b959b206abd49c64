// Writing API objects in the negotiated representation. Each stored object is serialized once per
// encoding and the bytes are kept on its cache entry, so that every get, list and watcher of
// that version shares them.
import { stringifyJSON } from '../codec/int64.js';
import { kept, keptUTF8 } from '../codec/kept.js';
import type { ServerResponse } from 'node:http';
import zlib from 'node:zlib';
import { yaml } from '../codec/yaml-lazy.js';
import type { CacheEntry } from '../storage/cacher.js';
import type { KindDecl } from '../schema/model.js';
import { JSON_TYPE, PROTOBUF_TYPE, YAML_TYPE, type OutputChoice } from '../codec/negotiate.js';
import { encodeEnvelope, encodeListFromItems, encodeListObjectChunks, encodeMessage } from '../codec/protobuf.js';
import { encodeCBOR, encodeCBORListFromItems, encodeCBORValue, CBOR_MEDIA_TYPE } from '../codec/cbor.js';
import { DEFAULT_PRINTER, humanDuration, printerFor, recordTimes, TIME_MARK, type Printer } from '../schema/printers/index.js';
import { errors, type StatusError } from '../machinery/errors.js';

export const STATUS_TYPE = 'io.k8s.apimachinery.pkg.apis.meta.v1.Status';
export const TABLE_TYPE = 'io.k8s.apimachinery.pkg.apis.meta.v1.Table';
export const POM_TYPE = 'io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata';
export const POML_TYPE = 'io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList';

/** Lists larger than this are written in chunks rather than as one buffer. */
const CHUNK_BYTES = 256 * 1024;

// Response compression, as kube-apiserver does it (APIResponseCompression, on by default): a
// response longer than 128 KiB to a client whose Accept-Encoding lists the token `gzip` is gzipped
// at the fastest level. As in Kubernetes, a token with parameters (`gzip;q=0.5`) does not count.
const GZIP_THRESHOLD = 128 * 1024;
let compression = true;

export function setResponseCompression(on: boolean): void {
  compression = on;
}

function acceptsGzip(res: ServerResponse): boolean {
  if (!compression) return false;
  const ae = res.req?.headers['accept-encoding'];
  return typeof ae === 'string' && ae.split(',').some((t) => t.trim() === 'gzip');
}

/** end the response with body, gzipped when it is large and the client accepts it */
function finish(res: ServerResponse, body: Uint8Array): void {
  if (body.length > GZIP_THRESHOLD && acceptsGzip(res)) {
    res.removeHeader('Content-Length');
    res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Vary', 'Accept-Encoding');
    zlib.gzip(body, { level: 1 }, (err, out) => {
      if (err) res.destroy(err);
      else res.end(out);
    });
    return;
  }
  res.end(body);
}

export interface ListMeta {
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export function entryJSON(e: CacheEntry): Uint8Array {
  let b = e.json;
  if (!b) {
    // (an entry of a load, frozen with its stored value: decoded for its JSON only, not kept decoded)
    b = keptUTF8(stringifyJSON(e.peek()));
    e.keepJSON(b);
  }
  return b;
}

export function entryProto(e: CacheEntry, kind: KindDecl): Uint8Array {
  let b = e.pb;
  if (!b) {
    b = kept(encodeMessage(kind.type, e.peek()));
    e.pb = b;
  }
  return b;
}

/** the CBOR body of a stored object, encoded once and shared */
export function entryCBOR(e: CacheEntry, kind: KindDecl): Uint8Array {
  let b = e.cbor;
  if (!b) {
    b = kept(encodeCBOR(kind.type, e.peek()));
    e.cbor = b;
  }
  return b;
}

/**
 * The Content-Type of a response: the media type of the serializer chosen, without the `as`, `g`
 * and `v` of a Table or metadata-only answer (kube-apiserver writes them the same way; the body's
 * kind says what it is).
 */
export function contentTypeOf(choice: OutputChoice): string {
  return choice.mediaType;
}

function headers(res: ServerResponse, contentType: string, len?: number): void {
  res.setHeader('Content-Type', contentType);
  res.setHeader('Cache-Control', 'no-cache, private');
  if (len !== undefined) res.setHeader('Content-Length', len);
}

function serializePlain(obj: unknown, choice: OutputChoice, protoType?: string, apiVersion?: string, kind?: string): Uint8Array {
  switch (choice.encoding) {
    case 'yaml':
      return Buffer.from(yaml().stringify(obj, { aliasDuplicateObjects: false, lineWidth: 0 }));
    case 'protobuf': {
      if (!protoType) throw errors.notAcceptable('protobuf is not available for this object');
      const o = obj as { apiVersion?: string; kind?: string };
      return encodeEnvelope(apiVersion ?? o.apiVersion ?? '', kind ?? o.kind ?? '', encodeMessage(protoType, obj));
    }
    case 'cbor':
      // the schema gives []byte fields their byte-string form; schemaless values as they are
      return protoType && !protoType.startsWith('io.k8s.apimachinery.pkg.apis.meta.v1.Table') ? encodeCBOR(protoType, obj) : encodeCBORValue(obj);
    default:
      // pretty: indented by two spaces, without a final newline (Go's json.MarshalIndent)
      return Buffer.from(stringifyJSON(obj, choice.pretty ? 2 : undefined));
  }
}

/** Write a plain (non-cached) object: Status, discovery, a dry-run result. */
export function writeObject(res: ServerResponse, code: number, obj: unknown, choice: OutputChoice, protoType?: string): void {
  const body = serializePlain(obj, choice, protoType);
  res.statusCode = code;
  headers(res, choice.mediaType, body.length);
  finish(res, body);
}

export function writeStatusError(res: ServerResponse, err: StatusError, choice?: OutputChoice): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const st = err.toStatus();
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  const c: OutputChoice = choice && !choice.transform ? choice : { encoding: 'json', mediaType: JSON_TYPE, transform: '', transformVersion: '', pretty: false };
  const body = serializePlain(st, c, STATUS_TYPE, 'v1', 'Status');
  res.statusCode = err.code;
  headers(res, c.mediaType, body.length);
  finish(res, body);
}

export function partialObjectMetadata(obj: any, version = 'v1'): any {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata };
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableOptions {
  includeObject: IncludeObject;
  noHeaders?: boolean;
}

export function printerForKind(kind: Pick<KindDecl, 'group' | 'kind' | 'custom'>): Printer {
  if (kind.custom) return kind.custom.printer ?? DEFAULT_PRINTER;
  return printerFor(kind.group, kind.kind) ?? DEFAULT_PRINTER;
}

export function tableOf(kind: Pick<KindDecl, 'group' | 'kind' | 'custom'>, objs: any[], listMeta: ListMeta | undefined, opts: TableOptions, version: string): any {
  const p = printerForKind(kind);
  const now = Date.now();
  const rows = (objs.length > 1 && p.order ? p.order(objs) : objs).map((o) => {
    const row: any = { cells: p.cells(o, now) };
    const conds = p.conditions?.(o);
    if (conds && conds.length) row.conditions = conds;
    if (opts.includeObject === 'Object') row.object = o;
    else if (opts.includeObject === 'Metadata') row.object = partialObjectMetadata(o, version);
    return row;
  });
  // ListMeta's fields are omitted when empty, as in Kubernetes' JSON
  const md: any = {};
  if (listMeta?.resourceVersion) md.resourceVersion = listMeta.resourceVersion;
  if (listMeta?.continue) md.continue = listMeta.continue;
  if (listMeta?.remainingItemCount !== undefined) md.remainingItemCount = listMeta.remainingItemCount;
  const t: any = { kind: 'Table', apiVersion: `meta.k8s.io/${version}`, metadata: md };
  t.columnDefinitions = opts.noHeaders ? null : p.columns;
  t.rows = rows;
  return t;
}

/**
 * Write a subresource view, an object of a kind of its own (autoscaling/v1 Scale), in the chosen
 * representation: its Table (the view kind's printer) and metadata-only forms included.
 */
export function writeView(res: ServerResponse, code: number, obj: any, choice: OutputChoice, view: Pick<KindDecl, 'group' | 'kind' | 'type'>, table?: TableOptions): void {
  if (choice.transform === 'Table') {
    const t = tableOf(view, [obj], { resourceVersion: obj?.metadata?.resourceVersion ?? '' }, table ?? { includeObject: 'Metadata' }, choice.transformVersion);
    writeObject(res, code, t, choice, TABLE_TYPE);
  } else if (choice.transform === 'PartialObjectMetadata') writeObject(res, code, partialObjectMetadata(obj, choice.transformVersion), choice, POM_TYPE);
  else writeObject(res, code, obj, choice, view.type);
}

/**
 * Write one stored object in the chosen representation. `obj` undefined: the entry's own object,
 * decoded only if the representation needs more than its cached bytes (a frozen entry's JSON or
 * Protobuf answer decodes nothing).
 */
export function writeEntry(res: ServerResponse, code: number, kind: KindDecl, obj: any, entry: CacheEntry | undefined, choice: OutputChoice, table?: TableOptions): void {
  const own = entry !== undefined && (obj === undefined || entry.decoded === obj);
  if (obj === undefined) obj = entry?.obj;
  let body: Uint8Array;
  switch (choice.transform) {
    case 'Table':
      // the Table of one object carries that object's resourceVersion, as Kubernetes' table generator sets it
      body = serializePlain(tableOf(kind, [obj], { resourceVersion: obj?.metadata?.resourceVersion ?? '' }, table ?? { includeObject: 'Metadata' }, choice.transformVersion), choice, TABLE_TYPE);
      break;
    case 'PartialObjectMetadata':
      body = serializePlain(partialObjectMetadata(obj, choice.transformVersion), choice, POM_TYPE);
      break;
    default:
      if (choice.encoding === 'json' && !choice.pretty && own) body = entryJSON(entry);
      else if (choice.encoding === 'protobuf') body = own ? entryEnvelope(entry, kind) : encodeEnvelope(obj.apiVersion, obj.kind, encodeMessage(kind.type, obj));
      else if (choice.encoding === 'cbor') body = own ? entryCBOR(entry, kind) : encodeCBOR(kind.type, obj);
      else body = serializePlain(obj, choice, kind.type);
  }
  res.statusCode = code;
  headers(res, contentTypeOf(choice), body.length);
  finish(res, body);
}

/**
 * A stored object's Protobuf answer (the k8s envelope around its cached message). The envelope's
 * TypeMeta is the object's, which for an entry of a built-in kind's cache is always its kind's:
 * so a frozen entry with its message cached is not decoded for it.
 */
export function entryEnvelope(e: CacheEntry, kind: KindDecl): Uint8Array {
  const raw = entryProto(e, kind);
  const o = e.decoded;
  if (o !== undefined) return encodeEnvelope(o.apiVersion, o.kind, raw);
  return encodeEnvelope(kind.group ? `${kind.group}/${kind.version}` : kind.version, kind.kind, raw);
}

/**
 * The items of a built-in kind's list carry no apiVersion and kind, as kube-apiserver writes
 * them: its typed lists' items have an empty TypeMeta (a GET, a write's answer and a watch event
 * carry both). Custom resources' items keep theirs, as Kubernetes' unstructured lists do.
 */
function bareItem(o: any): any {
  if (o === null || typeof o !== 'object' || (o.kind === undefined && o.apiVersion === undefined)) return o;
  const { kind: _k, apiVersion: _a, ...rest } = o;
  return rest;
}

/** whether bytes b begin with prefix */
function startsWith(b: Uint8Array, prefix: Uint8Array): boolean {
  if (b.length <= prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (b[i] !== prefix[i]) return false;
  return true;
}

/**
 * The empty list of a watch's kind (a PartialObjectMetadataList for a metadata watch) in the
 * watch's encoding: the `kubernetes.io/initial-events-list-blueprint` of a streaming list's last
 * bookmark, from which client-go builds the list it returns. As Go encodes an empty list:
 * `"items":null` for a built-in kind, `"items":[]` and no metadata for a custom one (an
 * UnstructuredList).
 */
export function emptyListBlueprint(kind: KindDecl, choice: OutputChoice): Uint8Array {
  const apiVersion = kind.group ? `${kind.group}/${kind.version}` : kind.version;
  if (choice.transform === 'PartialObjectMetadata') {
    const list = { kind: 'PartialObjectMetadataList', apiVersion: `meta.k8s.io/${choice.transformVersion}`, metadata: {}, items: null };
    return serializePlain(list, { ...choice, pretty: false }, POML_TYPE);
  }
  if (choice.encoding === 'protobuf') return encodeEnvelope(apiVersion, kind.listKind, encodeListFromItems(`${kind.type}List`, {}, []));
  if (choice.encoding === 'cbor') return encodeCBORListFromItems(apiVersion, kind.listKind, {}, []);
  if (kind.custom) return Buffer.from(stringifyJSON({ apiVersion, items: [], kind: kind.listKind }));
  return Buffer.from(stringifyJSON({ kind: kind.listKind, apiVersion, metadata: {}, items: null }));
}

/**
 * One stored object's Table row under one printer, kept on its cache entry: each cell's JSON, a
 * string cell that shows a time (an age) as its text around the times, the row's conditions, and
 * where the metadata is in the entry's JSON. A list of Pods as a Table (every `kubectl get`)
 * then decodes and prints nothing for an object it has printed before; only the ages are
 * written anew, for the request's moment.
 */
interface TableRow {
  printer: Printer;
  /** the cells' JSON, commas included: text, and for a string cell that shows times, its pieces around them ([text, time, text, ...]) */
  cells: (string | (string | number)[])[];
  /** `,"conditions":[...]`, or '' */
  conditions: string;
  /** the span of the metadata object in the entry's JSON; -1 if it was not found there */
  metaStart: number;
  metaEnd: number;
}

/** the entry's row for printer `p`, made now if it has none (undefined: a row to print afresh each time) */
function tableRow(e: CacheEntry, p: Printer): TableRow | undefined {
  const kept = e.row as TableRow | undefined | null;
  if (kept !== undefined && kept !== null && kept.printer === p) return kept;
  if (kept === null) return undefined;
  // (a frozen entry is decoded for this row only: the row is what is kept)
  const o = e.peek();
  const { value: cells, times } = recordTimes(() => p.cells(o, Date.now()));
  const conds = p.conditions?.(o);
  const row: TableRow = { printer: p, cells: [], conditions: conds && conds.length ? `,"conditions":${stringifyJSON(conds)}` : '', metaStart: -1, metaEnd: -1 };
  let text = '';
  for (let i = 0; i < cells.length; i++) {
    const c = cells[i];
    if (i) text += ',';
    if (times.length > 0 && typeof c === 'string' && c.includes(TIME_MARK)) {
      const pieces = c.split(TIME_MARK);
      // text, index, text, index, ..., text: the indices become the times
      const timed: (string | number)[] = [];
      for (let j = 0; j < pieces.length; j++) timed.push(j % 2 ? times[Number(pieces[j])]! : pieces[j]!);
      if (text !== '') row.cells.push(text);
      row.cells.push(timed);
      text = '';
    } else text += stringifyJSON(c === undefined ? null : c);
  }
  if (text !== '') row.cells.push(text);
  // a time put anywhere else (in a number, in the conditions) cannot be written later: no row kept
  if (times.length > 0 && (row.conditions.includes(TIME_MARK) || row.cells.some((c) => typeof c === 'string' && c.includes(TIME_MARK)))) {
    e.row = null;
    return undefined;
  }
  const span = metadataSpan(entryJSON(e));
  if (span !== undefined) [row.metaStart, row.metaEnd] = span;
  e.row = row;
  return row;
}

const META_KEY = Buffer.from('"metadata":');
const CLOSE = Buffer.from('}');
const LIST_END = Buffer.from(']}');

/** an object's metadata as JSON: its span of the entry's JSON, or serialized from the object if it is not found there */
function entryMetadataJSON(e: CacheEntry): Uint8Array {
  const json = entryJSON(e);
  const row = e.row as TableRow | undefined | null;
  if (row && row.metaStart >= 0) return json.subarray(row.metaStart, row.metaEnd);
  const span = metadataSpan(json);
  return span !== undefined ? json.subarray(span[0], span[1]) : Buffer.from(stringifyJSON(e.peek()?.metadata ?? null));
}

/**
 * An object's PartialObjectMetadata message: when the entry keeps its Protobuf encoding, that
 * message's first field (ObjectMeta is field 1 of every kind's message, and of
 * PartialObjectMetadata's), else encoded from the object.
 */
function entryMetadataProto(e: CacheEntry): Uint8Array {
  const pb = e.pb;
  if (pb !== undefined && pb[0] === 0x0a) {
    // the field's length, a varint after its tag
    let len = 0;
    let shift = 0;
    let i = 1;
    for (; i < pb.length && i < 6; i++) {
      const b = pb[i]!;
      len += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (b < 0x80) break;
    }
    const end = i + 1 + len;
    if (i < 6 && end <= pb.length) return pb.subarray(0, end);
  }
  return encodeMessage(POM_TYPE, partialObjectMetadata(e.peek()));
}

/**
 * Where the top-level "metadata" object is in an object's JSON (as this server writes it: no
 * white space, kind and apiVersion first), or undefined. The members before it are skipped
 * string-aware, and the object's end is found by counting brackets outside strings.
 */
function metadataSpan(b: Uint8Array): [number, number] | undefined {
  let i = 1;
  // the members before it: "key":value, with simple values only (kind, apiVersion)
  while (i < b.length && b[i] === 0x22) {
    if (startsWith(b.subarray(i), META_KEY)) {
      const start = i + META_KEY.length;
      if (b[start] !== 0x7b) return undefined;
      const end = valueEnd(b, start);
      return end === undefined ? undefined : [start, end];
    }
    const keyEnd = stringEnd(b, i);
    if (keyEnd === undefined || b[keyEnd] !== 0x3a) return undefined;
    const v = keyEnd + 1;
    if (b[v] !== 0x22) return undefined; // not a string: not what this server writes before metadata
    const vEnd = stringEnd(b, v);
    if (vEnd === undefined || b[vEnd] !== 0x2c) return undefined;
    i = vEnd + 1;
  }
  return undefined;
}

/** the index after the JSON string starting at `i` (a quote), or undefined */
function stringEnd(b: Uint8Array, i: number): number | undefined {
  for (let j = i + 1; j < b.length; j++) {
    const c = b[j];
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  return undefined;
}

/** the index after the JSON object or array starting at `i`, or undefined */
function valueEnd(b: Uint8Array, i: number): number | undefined {
  let depth = 0;
  for (let j = i; j < b.length; j++) {
    const c = b[j];
    if (c === 0x22) {
      const e = stringEnd(b, j);
      if (e === undefined) return undefined;
      j = e - 1;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0) return j + 1;
    }
  }
  return undefined;
}

/** a Table row's JSON text up to where its object goes: its cells at `now`, its conditions */
function rowCellsJSON(row: TableRow, now: number): string {
  let s = '{"cells":[';
  for (let i = 0; i < row.cells.length; i++) {
    const c = row.cells[i]!;
    if (typeof c === 'string') s += c;
    else {
      let text = '';
      for (let j = 0; j < c.length; j++) text += j % 2 ? humanDuration(now - (c[j] as number)) : (c[j] as string);
      s += JSON.stringify(text);
    }
  }
  return s + ']' + row.conditions;
}

/**
 * A list as a JSON Table (not indented), row by row from the rows kept on the entries, each
 * row's object from the entry's JSON bytes; undefined when the kind's printer orders its rows or
 * a row cannot be kept (the caller prints the list the general way, tableOf).
 */
function tableJSONPieces(kind: Pick<KindDecl, 'group' | 'kind' | 'custom'>, entries: CacheEntry[], meta: ListMeta, opts: TableOptions, version: string): { pieces: Uint8Array[]; total: number } | undefined {
  const p = printerForKind(kind);
  if (p.order) return undefined;
  const rows: TableRow[] = new Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const r = tableRow(entries[i]!, p);
    if (r === undefined) return undefined;
    rows[i] = r;
  }
  const now = Date.now();
  const md: any = {};
  if (meta.resourceVersion) md.resourceVersion = meta.resourceVersion;
  if (meta.continue) md.continue = meta.continue;
  if (meta.remainingItemCount !== undefined) md.remainingItemCount = meta.remainingItemCount;
  const head = `{"kind":"Table","apiVersion":"meta.k8s.io/${version}","metadata":${stringifyJSON(md)},"columnDefinitions":${opts.noHeaders ? 'null' : stringifyJSON(p.columns)},"rows":[`;
  const pieces: Uint8Array[] = [];
  let total = 0;
  let text = head;
  const flush = (): void => {
    if (text === '') return;
    const b = Buffer.from(text);
    pieces.push(b);
    total += b.length;
    text = '';
  };
  const add = (b: Uint8Array): void => {
    flush();
    pieces.push(b);
    total += b.length;
  };
  const pom = `,"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/${version}","metadata":`;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const e = entries[i]!;
    if (i) text += ',';
    text += rowCellsJSON(row, now);
    if (opts.includeObject === 'Object') {
      text += ',"object":';
      add(entryJSON(e));
      text += '}';
    } else if (opts.includeObject === 'Metadata') {
      text += pom;
      add(entryMetadataJSON(e));
      text += '}}';
    } else text += '}';
    // (text is turned into bytes every few rows, not held as one string for the whole list)
    if (text.length > 16_384) flush();
  }
  text += ']}';
  flush();
  return { pieces, total };
}

/** stored objects as a JSON Table (not indented) from their kept rows, or undefined where the general path must print them (tableOf) */
export function tableJSON(kind: Pick<KindDecl, 'group' | 'kind' | 'custom'>, entries: CacheEntry[], meta: ListMeta, opts: TableOptions, version: string): Uint8Array | undefined {
  const t = tableJSONPieces(kind, entries, meta, opts, version);
  return t && Buffer.concat(t.pieces, t.total);
}

/** a 200 answer of these pieces: one buffer when it is small, else written piece by piece (stream) */
function writePieces(res: ServerResponse, contentType: string, pieces: Uint8Array[], total: number): void {
  headers(res, contentType, total);
  if (total <= CHUNK_BYTES) finish(res, Buffer.concat(pieces, total));
  else stream(res, pieces);
}

/** Write a list of stored objects. Large JSON and Protobuf lists are written item by item. */
export function writeList(res: ServerResponse, kind: KindDecl, entries: CacheEntry[], meta: ListMeta, choice: OutputChoice, table?: TableOptions): void {
  const apiVersion = kind.group ? `${kind.group}/${kind.version}` : kind.version;
  res.statusCode = 200;
  if (choice.transform === 'Table' && choice.encoding === 'json' && !choice.pretty) {
    const t = tableJSONPieces(kind, entries, meta, table ?? { includeObject: 'Metadata' }, choice.transformVersion);
    if (t !== undefined) return writePieces(res, contentTypeOf(choice), t.pieces, t.total);
  }
  if (choice.transform === 'Table') {
    const body = serializePlain(
      tableOf(
        kind,
        entries.map((e) => e.obj),
        meta,
        table ?? { includeObject: 'Metadata' },
        choice.transformVersion,
      ),
      choice,
      TABLE_TYPE,
    );
    headers(res, contentTypeOf(choice), body.length);
    finish(res, body);
    return;
  }
  if (choice.transform === 'PartialObjectMetadataList' && !choice.pretty && (choice.encoding === 'json' || choice.encoding === 'protobuf')) {
    // from the bytes the entries keep: a frozen object is not decoded for its metadata
    const version = choice.transformVersion;
    const pieces: Uint8Array[] = [];
    if (choice.encoding === 'json') {
      pieces.push(Buffer.from(`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/${version}","metadata":${stringifyJSON(meta)},"items":[`));
      const head = Buffer.from(`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/${version}","metadata":`);
      const next = Buffer.from(`},${head.toString('latin1')}`);
      for (let i = 0; i < entries.length; i++) {
        pieces.push(i ? next : head, entryMetadataJSON(entries[i]!));
      }
      if (entries.length) pieces.push(CLOSE);
      pieces.push(LIST_END);
    }
    // (Protobuf: the chunks hold each item's kept bytes as they are; only the framing is new)
    else for (const b of encodeListObjectChunks(`meta.k8s.io/${version}`, 'PartialObjectMetadataList', meta, entries.map(entryMetadataProto), 16)) pieces.push(b);
    let total = 0;
    for (const b of pieces) total += b.length;
    return writePieces(res, contentTypeOf(choice), pieces, total);
  }
  if (choice.transform === 'PartialObjectMetadataList') {
    const list = {
      kind: 'PartialObjectMetadataList',
      apiVersion: `meta.k8s.io/${choice.transformVersion}`,
      metadata: meta,
      items: entries.map((e) => partialObjectMetadata(e.obj, choice.transformVersion)),
    };
    const body = serializePlain(list, choice, POML_TYPE);
    headers(res, contentTypeOf(choice), body.length);
    finish(res, body);
    return;
  }
  if (choice.encoding === 'protobuf') {
    const items = entries.map((e) => entryProto(e, kind));
    let size = 0;
    for (const b of items) size += b.length;
    if (size <= CHUNK_BYTES) {
      const body = encodeEnvelope(apiVersion, kind.listKind, encodeListFromItems(`${kind.type}List`, meta, items));
      headers(res, PROTOBUF_TYPE, body.length);
      finish(res, body);
      return;
    }
    // item by item, from the cached encodings, at the pace the client reads: the envelope and a
    // small field header per item are new bytes, each item's message is the cached one (a chunk
    // size below any item makes the encoder hand the items out as they are)
    // (run twice: once for the length, once to write, rather than holding every piece at once)
    const pieces = () => encodeListObjectChunks(apiVersion, kind.listKind, meta, items, 16);
    let total = 0;
    for (const b of pieces()) total += b.length;
    headers(res, PROTOBUF_TYPE, total);
    stream(res, pieces());
    return;
  }
  const bare = !kind.custom;
  if (choice.encoding === 'cbor') {
    const body = encodeCBORListFromItems(apiVersion, kind.listKind, meta, entries.map((e) => (bare ? encodeCBOR(kind.type, bareItem(e.obj)) : entryCBOR(e, kind))));
    headers(res, CBOR_MEDIA_TYPE, body.length);
    finish(res, body);
    return;
  }
  if (choice.encoding !== 'json' || choice.pretty) {
    const list = { kind: kind.listKind, apiVersion, metadata: meta, items: entries.map((e) => (bare ? bareItem(e.obj) : e.obj)) };
    const body = serializePlain(list, choice);
    headers(res, choice.encoding === 'yaml' ? YAML_TYPE : JSON_TYPE, body.length);
    finish(res, body);
    return;
  }
  // JSON, item by item from the cached encodings
  const head = Buffer.from(`{"kind":"${kind.listKind}","apiVersion":"${apiVersion}","metadata":${stringifyJSON(meta)},"items":[`);
  const tail = Buffer.from(']}');
  // A built-in item is written as "{" and its cached bytes after their leading TypeMeta (the view
  // made as it is written: no object per item held for the whole response); an item whose bytes do
  // not start so (none is expected) is serialized anew, without its leading "{".
  const typeMeta = bare ? Buffer.from(`{"kind":"${kind.kind}","apiVersion":"${apiVersion}",`) : undefined;
  const parts: Uint8Array[] = new Array(entries.length);
  let own: Map<number, Uint8Array> | undefined;
  let total = head.length + tail.length + Math.max(0, entries.length - 1);
  for (let i = 0; i < entries.length; i++) {
    const b = entryJSON(entries[i]!);
    parts[i] = b;
    if (!typeMeta) total += b.length;
    else if (startsWith(b, typeMeta)) total += 1 + b.length - typeMeta.length;
    else {
      const x = Buffer.from(stringifyJSON(bareItem(entries[i]!.obj)).slice(1));
      (own ??= new Map()).set(i, x);
      total += 1 + x.length;
    }
  }
  if (total <= CHUNK_BYTES) {
    headers(res, JSON_TYPE, total);
    finish(res, Buffer.concat([...jsonListPieces(head, parts, typeMeta, own, tail)], total));
    return;
  }
  headers(res, JSON_TYPE, total);
  stream(res, jsonListPieces(head, parts, typeMeta, own, tail));
}

/**
 * The pieces of a JSON list body: the head, each item with commas between, the tail. With
 * `typeMeta` (a built-in kind), each item is "{" and its bytes after the TypeMeta (or its own).
 */
function* jsonListPieces(head: Uint8Array, parts: Uint8Array[], typeMeta: Uint8Array | undefined, own: Map<number, Uint8Array> | undefined, tail: Uint8Array): Generator<Uint8Array> {
  yield head;
  for (let i = 0; i < parts.length; i++) {
    if (!typeMeta) {
      if (i) yield COMMA;
      yield parts[i]!;
      continue;
    }
    yield i ? COMMA_OPEN : OPEN;
    yield own?.get(i) ?? parts[i]!.subarray(typeMeta.length);
  }
  yield tail;
}
const COMMA = Buffer.from(',');
const OPEN = Buffer.from('{');
const COMMA_OPEN = Buffer.from(',{');

/**
 * Write a large body piece by piece: batches of about CHUNK_BYTES are handed to the socket
 * together (corked, so they leave as few large writes), and the next batch only when the socket
 * has drained, so that what is queued for a slow reader stays around one batch instead of the
 * whole response. The pieces are the cached encodings themselves: nothing is copied here.
 * Gzipped (dropping Content-Length) for a client that accepts it: such a body is always above
 * the compression threshold.
 */
function stream(res: ServerResponse, pieces: Iterable<Uint8Array>): void {
  const it = pieces[Symbol.iterator]();
  let gone = false;
  res.once('close', () => (gone = true));
  if (acceptsGzip(res)) {
    res.removeHeader('Content-Length');
    res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Vary', 'Accept-Encoding');
    const gz = zlib.createGzip({ level: 1 });
    gz.on('error', (e) => res.destroy(e));
    res.once('close', () => gz.destroy());
    gz.pipe(res);
    gzipPieces(gz, it, () => gone);
    return;
  }
  // (an HTTP/2 compatibility response has no cork: then the writes go one by one)
  const out = res as ServerResponse & { cork?: () => void; uncork?: () => void };
  const pump = (): void => {
    while (!gone) {
      let room = true;
      let batch = 0;
      out.cork?.();
      while (room && batch < CHUNK_BYTES) {
        const n = it.next();
        if (n.done) {
          out.uncork?.();
          res.end();
          return;
        }
        batch += n.value.length;
        room = res.write(n.value);
      }
      out.uncork?.();
      if (!room) {
        res.once('drain', pump);
        return;
      }
    }
  };
  pump();
}

/**
 * Feed pieces to gzip through one staging buffer of CHUNK_BYTES, reused once zlib has consumed
 * it (the write callback; zlib holds back while the socket is full): the compressor wants few
 * large writes, and one buffer per response keeps the memory flat however large the list.
 */
function gzipPieces(gz: zlib.Gzip, it: Iterator<Uint8Array>, gone: () => boolean): void {
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  let carry: Uint8Array | undefined;
  let exhausted = false;
  const step = (): void => {
    if (gone()) return;
    let n = 0;
    while (n < buf.length) {
      let piece = carry;
      carry = undefined;
      if (!piece) {
        const r = it.next();
        if (r.done) {
          exhausted = true;
          break;
        }
        piece = r.value;
      }
      const take = Math.min(piece.length, buf.length - n);
      buf.set(take === piece.length ? piece : piece.subarray(0, take), n);
      n += take;
      if (take < piece.length) carry = piece.subarray(take);
    }
    if (n === 0) {
      gz.end();
      return;
    }
    gz.write(buf.subarray(0, n), (err) => {
      if (err) return;
      if (exhausted) gz.end();
      else step();
    });
  };
  step();
}

export { JSON_TYPE, YAML_TYPE, PROTOBUF_TYPE };

/** Write a list of plain objects (virtual resources, not from the watch cache). */
export function writeListObjects(res: ServerResponse, kind: KindDecl, objs: any[], choice: OutputChoice, table?: TableOptions): void {
  const apiVersion = kind.group ? `${kind.group}/${kind.version}` : kind.version;
  const meta: ListMeta = { resourceVersion: '' };
  let body: Uint8Array;
  if (choice.transform === 'Table') body = serializePlain(tableOf(kind, objs, meta, table ?? { includeObject: 'Metadata' }, choice.transformVersion), choice, TABLE_TYPE);
  else if (choice.transform === 'PartialObjectMetadataList') {
    body = serializePlain(
      { kind: 'PartialObjectMetadataList', apiVersion: `meta.k8s.io/${choice.transformVersion}`, metadata: meta, items: objs.map((o) => partialObjectMetadata(o, choice.transformVersion)) },
      choice,
      POML_TYPE,
    );
  } else body = serializePlain({ kind: kind.listKind, apiVersion, metadata: meta, items: kind.custom ? objs : objs.map(bareItem) }, choice, `${kind.type}List`, apiVersion, kind.listKind);
  res.statusCode = 200;
  headers(res, contentTypeOf(choice), body.length);
  finish(res, body);
}
