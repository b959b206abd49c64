// The Kubernetes Protobuf encoding (`application/vnd.kubernetes.protobuf`), driven by the schema.
//
// Objects are plain JS values in their JSON form. A body is the 4-byte prefix "k8s\0" followed by
// a runtime.Unknown message {1 typeMeta {1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding,
// 4 contentType} whose `raw` is the object's own message (see protobuf-compile.ts for how each
// field is written; the bytes are those Go's generated marshallers write).
//
// Decoding gives the JSON Go's encoding/json would print for the decoded Go value:
//  - a non-pointer scalar prints its value; with omitempty, a zero value ("", 0, false) is left out;
//  - a pointer (nullable scalar or struct) prints when it was on the wire (even a zero value),
//    and otherwise is left out under omitempty or printed as null without it;
//  - a non-pointer struct always prints (an absent one as its zero value, e.g. "status": {}),
//    since omitempty never omits a struct in Go;
//  - a slice or map prints when it has elements; absent, it is left out under omitempty and
//    printed as null without it (Go's nil slice: e.g. EndpointSlice "endpoints": null; a codec
//    built with { nilCollections: 'empty' } gives [] and {} instead);
//    a wrapper slice (APIResource.verbs) can be present and empty: it prints [];
//  - []byte prints as base64; absent, left out under omitempty, else null;
//  - Quantity, IntOrString and Duration always print ("0", 0, "0s" when zero);
//  - one deliberate difference from Go before 1.34: a zero Time, MicroTime, RawExtension,
//    FieldsV1 or JSON (which Go prints as null) is left out under omitempty, as Go's `omitzero`
//    does. Kubernetes 1.34 tagged ObjectMeta.creationTimestamp `omitempty,omitzero` to stop
//    printing "creationTimestamp": null; kubectl 1.33's protobuf ConfigMap therefore decodes to
//    {"metadata":{"name":"x"}}, and JSON clients treat null and absent alike for these types;
//  - kind and apiVersion come from the envelope (decodeObject), first, as Go prints TypeMeta;
//    list items carry none, as in Go;
//  - int64 values are exact: beyond ±(2^53 - 1) they are bigints (codec/int64.ts), within it
//    numbers; Duration is exact (bigint).
//
// In the server: encode an object once, `encodeObject(obj)`, and keep the body. It answers a GET
// as is; a list is `encodeListObjectFromItems` / `encodeListObjectChunks` over
// `messageOfObject(body)` views (no copy, no re-encoding); a watch event is
// `encodeWatchEventFrame(type, body)`, one frame shared by every watcher. A protobuf watch
// (`PROTOBUF_WATCH_MEDIA_TYPE`) is a sequence of frames: a 4-byte big-endian length, then a
// WatchEvent message without prefix or envelope, whose object.raw is the object's full body,
// as k8s.io/apiserver writes it and client-go reads it.
//
// Encoding ignores JSON fields the type does not declare and writes what Go writes for the same
// JSON (a field absent from JSON is the Go zero value). Quantity strings are kept as given
// (Go would write the canonical form); canonicalizing is the job of the layer that validates.
import type { TypeDecl } from '../schema/model.js';
import { getType, typeForKind as schemaTypeForKind } from '../schema/types.js';
import { JSON_SCHEMA_PROPS, PROTOBUF_PREFIX, ProtobufCompiler, type TypeLookup } from './protobuf-compile.js';
import { ProtobufError, ProtobufNotSupportedError, Reader, RevWriter, putVarint, utf8Bytes, varintSize } from './protobuf-wire.js';

export { PROTOBUF_PREFIX, ProtobufError, ProtobufNotSupportedError, JSON_SCHEMA_PROPS };
export type { TypeLookup };

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
/** the watch media type: length-delimited frames, each a WatchEvent message (no prefix) */
export const PROTOBUF_WATCH_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf;stream=watch';

/** the decoded runtime.Unknown of a protobuf body; `raw` is a view into the input (no copy) */
export interface Envelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

/** one event of a protobuf watch stream; `object` is the object's full body (prefix + envelope) */
export interface WatchEventFrame {
  type: string;
  object: Uint8Array;
}

export type KindLookup = (group: string, version: string, kind: string) => TypeDecl | undefined;

export interface ProtobufCodecOptions {
  /** how absent non-omitempty slices and maps decode: Go's null (default) or [] and {} */
  nilCollections?: 'null' | 'empty';
}

const META_PACKAGE = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const WRITER_KEEP = 1 << 20;
const EMPTY = new Uint8Array(0);

function splitApiVersion(apiVersion: string): [group: string, version: string] {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

function asObject(obj: unknown, what: string): Record<string, unknown> {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
    throw new ProtobufError(`protobuf: ${what}: expected an object`);
  }
  return obj as Record<string, unknown>;
}

/** the bytes of a string field: tag, length, UTF-8 */
function strFieldSize(s: Uint8Array): number {
  return 1 + varintSize(s.length) + s.length;
}

/**
 * A protobuf codec over one universe of TypeDecls. The module-level functions use the default
 * instance over the generated schema; tests and tools can build one over their own declarations.
 */
export class ProtobufCodec {
  readonly compiler: ProtobufCompiler;
  private writer: RevWriter | undefined = new RevWriter();

  constructor(
    lookup: TypeLookup,
    private readonly kindLookup: KindLookup = () => undefined,
    options: ProtobufCodecOptions = {},
  ) {
    this.compiler = new ProtobufCompiler(lookup, { decodeNestedObject: (raw) => this.decodeObject(raw), nilCollections: options.nilCollections });
  }

  // ---------------------------------------------------------------- writers

  private take(): RevWriter {
    const w = this.writer ?? new RevWriter();
    this.writer = undefined; // re-entrant calls get their own writer
    w.reset();
    return w;
  }

  private give(w: RevWriter): void {
    this.writer = w.buf.length > WRITER_KEEP ? new RevWriter() : w;
  }

  // ---------------------------------------------------------------- messages

  /** the message bytes of an object of a type (no prefix, no envelope) */
  encodeMessage(typeName: string, obj: unknown): Uint8Array {
    const i = this.compiler.checkProto(typeName);
    const o = asObject(obj, typeName);
    const w = this.take();
    try {
      this.compiler.enc[i](w, o);
      return w.finish();
    } catch (e) {
      throw wrapError(e);
    } finally {
      this.give(w);
    }
  }

  /** the JSON form of a message of a type; `into` (e.g. {kind, apiVersion}) receives the fields */
  decodeMessage(typeName: string, bytes: Uint8Array, into?: Record<string, unknown>): unknown {
    const i = this.compiler.checkProto(typeName);
    const r = new Reader(bytes);
    try {
      return this.compiler.dec[i](r, bytes.length, into);
    } catch (e) {
      throw wrapError(e);
    }
  }

  // ---------------------------------------------------------------- kinds

  /**
   * The TypeDecl of an apiVersion and kind. The meta.k8s.io kinds that Go registers in every
   * group version (Status, WatchEvent, DeleteOptions, ...) resolve whatever the group, and
   * meta.k8s.io/v1beta1 resolves to v1 (its types are aliases of v1's).
   */
  typeOfKind(apiVersion: string, kind: string): TypeDecl | undefined {
    const [group, version] = splitApiVersion(apiVersion);
    const exact = this.kindLookup(group, version, kind);
    if (exact) return exact;
    const core = this.kindLookup('', 'v1', kind);
    if (core && core.name.startsWith(META_PACKAGE)) return core;
    const meta = this.kindLookup('meta.k8s.io', 'v1', kind);
    if (meta && meta.name.startsWith(META_PACKAGE)) return meta;
    return undefined;
  }

  /**
   * Whether objects of this kind have a protobuf form: false for kinds without a registered type
   * (custom resources) and for JSON-only types (Table). Content negotiation should not offer
   * protobuf for them; Kubernetes answers 406 (response) or 415 (request body).
   */
  supportsProtobuf(apiVersion: string, kind: string): boolean {
    const t = this.typeOfKind(apiVersion, kind);
    return t !== undefined && !t.noProto;
  }

  private mustTypeOfKind(apiVersion: string, kind: string): TypeDecl {
    if (!kind) throw new ProtobufError('protobuf: object has no kind');
    if (!apiVersion) throw new ProtobufError(`protobuf: object of kind ${kind} has no apiVersion`);
    const t = this.typeOfKind(apiVersion, kind);
    if (!t) throw new ProtobufError(`protobuf: no type is registered for kind ${kind} in ${apiVersion}`);
    if (t.noProto) throw new ProtobufNotSupportedError(`${apiVersion}, Kind=${kind}`);
    return t;
  }

  // ---------------------------------------------------------------- envelope and objects

  /**
   * The full body of an object: prefix + Unknown{typeMeta, raw, contentEncoding, contentType},
   * the type chosen by the object's apiVersion and kind. Lists (PodList ...) work the same way.
   * Throws ProtobufNotSupportedError (406) for kinds without a protobuf form (Table).
   * `as` names the apiVersion and kind when the object does not carry them (list items, stored
   * objects); the envelope then carries these.
   */
  encodeObject(obj: unknown, as?: { apiVersion: string; kind: string }): Uint8Array {
    const o = asObject(obj, 'object');
    const apiVersion = as ? as.apiVersion : typeof o.apiVersion === 'string' ? o.apiVersion : '';
    const kind = as ? as.kind : typeof o.kind === 'string' ? o.kind : '';
    const t = this.mustTypeOfKind(apiVersion, kind);
    const i = this.compiler.checkProto(t.name);
    const w = this.take();
    try {
      // backwards: contentType, contentEncoding, raw, typeMeta, prefix
      w.byte(0);
      w.byte(0x22);
      w.byte(0);
      w.byte(0x1a);
      const s = w.len();
      this.compiler.enc[i](w, o);
      w.u32(w.len() - s);
      w.byte(0x12);
      writeTypeMeta(w, apiVersion, kind);
      w.raw(PROTOBUF_PREFIX);
      return w.finish();
    } catch (e) {
      throw wrapError(e);
    } finally {
      this.give(w);
    }
  }

  /**
   * The JSON form of a full body. The type comes from the envelope's typeMeta; `defaults` fill in
   * a missing apiVersion or kind, as Go's serializer does with the type the caller expects.
   */
  decodeObject(buf: Uint8Array, defaults?: { apiVersion?: string; kind?: string }): Record<string, unknown> {
    const env = decodeEnvelope(buf);
    const kind = env.kind || defaults?.kind || '';
    const apiVersion = env.apiVersion || defaults?.apiVersion || '';
    if (env.contentEncoding) throw new ProtobufError(`protobuf: unsupported content encoding ${JSON.stringify(env.contentEncoding)}`);
    const t = this.mustTypeOfKind(apiVersion, kind);
    const into: Record<string, unknown> | undefined = t.typeMeta ? { kind, apiVersion } : undefined;
    return this.decodeMessage(t.name, env.raw, into) as Record<string, unknown>;
  }

  // ---------------------------------------------------------------- lists from cached items

  private listFields(listTypeName: string): string {
    const d = this.compiler.decl(listTypeName);
    const meta = d.fields.find((f) => f.proto === 1);
    const items = d.fields.find((f) => f.proto === 2);
    if (!meta || meta.name !== 'metadata' || meta.type.kind !== 'object' || !items || items.name !== 'items' || items.type.kind !== 'array' || items.type.items.kind !== 'object') {
      throw new ProtobufError(`protobuf: ${listTypeName} is not a list type {1 metadata ListMeta, 2 items repeated}`);
    }
    return meta.type.name;
  }

  private listParts(listTypeName: string, listMeta: unknown, itemBytes: readonly Uint8Array[]): { meta: Uint8Array; size: number } {
    const meta = this.encodeMessage(this.listFields(listTypeName), listMeta ?? {});
    let size = 1 + varintSize(meta.length) + meta.length;
    for (const b of itemBytes) size += 1 + varintSize(b.length) + b.length;
    return { meta, size };
  }

  /**
   * The message of a list (`1 metadata ListMeta, 2 items repeated`) built from each item's
   * already-encoded message bytes, copied once, never re-encoded.
   */
  encodeListFromItems(listTypeName: string, listMeta: unknown, itemBytes: readonly Uint8Array[]): Uint8Array {
    const { meta, size } = this.listParts(listTypeName, listMeta, itemBytes);
    const out = Buffer.allocUnsafe(size);
    const end = writeListBody(out, 0, meta, itemBytes);
    if (end !== size) throw new ProtobufError('protobuf: internal error: list size mismatch');
    return out;
  }

  /** a list's full body (prefix + envelope) from its items' message bytes, in one allocation */
  encodeListObjectFromItems(apiVersion: string, kind: string, listMeta: unknown, itemBytes: readonly Uint8Array[]): Uint8Array {
    const t = this.mustTypeOfKind(apiVersion, kind);
    const { meta, size } = this.listParts(t.name, listMeta, itemBytes);
    const head = envelopeHead(apiVersion, kind, size);
    const out = Buffer.allocUnsafe(head.length + size + 4);
    out.set(head, 0);
    let p = writeListBody(out, head.length, meta, itemBytes);
    out[p++] = 0x1a;
    out[p++] = 0;
    out[p++] = 0x22;
    out[p++] = 0;
    return out;
  }

  /**
   * The same body as encodeListObjectFromItems, as a sequence of chunks for a streaming response:
   * sizes are known up front (as Go's streaming collection encoder does), small items are copied
   * into chunks of about `chunkSize` bytes, and items larger than that are yielded as they are.
   */
  *encodeListObjectChunks(
    apiVersion: string,
    kind: string,
    listMeta: unknown,
    itemBytes: readonly Uint8Array[],
    chunkSize = 64 * 1024,
  ): Generator<Uint8Array, void, undefined> {
    const t = this.mustTypeOfKind(apiVersion, kind);
    const { meta, size } = this.listParts(t.name, listMeta, itemBytes);
    const head = envelopeHead(apiVersion, kind, size);
    let chunk = Buffer.allocUnsafe(Math.max(chunkSize, head.length + meta.length + 16));
    let p = 0;
    chunk.set(head, 0);
    p = head.length;
    chunk[p++] = 0x0a;
    p = putVarint(chunk, p, meta.length);
    chunk.set(meta, p);
    p += meta.length;
    for (const item of itemBytes) {
      const need = 6 + item.length;
      if (p + need > chunk.length) {
        if (p > 0) {
          yield chunk.subarray(0, p);
          chunk = Buffer.allocUnsafe(Math.max(chunkSize, 16));
          p = 0;
        }
        if (need > chunk.length) {
          chunk[p++] = 0x12;
          p = putVarint(chunk, p, item.length);
          yield chunk.subarray(0, p);
          yield item;
          chunk = Buffer.allocUnsafe(Math.max(chunkSize, 16));
          p = 0;
          continue;
        }
      }
      chunk[p++] = 0x12;
      p = putVarint(chunk, p, item.length);
      chunk.set(item, p);
      p += item.length;
    }
    if (p + 4 > chunk.length) {
      yield chunk.subarray(0, p);
      chunk = Buffer.allocUnsafe(4);
      p = 0;
    }
    chunk[p++] = 0x1a;
    chunk[p++] = 0;
    chunk[p++] = 0x22;
    chunk[p++] = 0;
    yield chunk.subarray(0, p);
  }
}

function wrapError(e: unknown): Error {
  if (e instanceof ProtobufError) return e;
  if (e instanceof RangeError && /call stack/i.test(e.message)) return new ProtobufError(`protobuf: message nested too deeply (${e.message})`);
  return e as Error;
}

function writeTypeMeta(w: RevWriter, apiVersion: string, kind: string): void {
  const s = w.len();
  w.str(kind);
  w.byte(0x12);
  w.str(apiVersion);
  w.byte(0x0a);
  w.u32(w.len() - s);
  w.byte(0x0a);
}

/** prefix + typeMeta + the tag and length of `raw` (rawSize bytes follow) */
function envelopeHead(apiVersion: string, kind: string, rawSize: number): Uint8Array {
  const av = utf8Bytes(apiVersion);
  const k = utf8Bytes(kind);
  const tmSize = strFieldSize(av) + strFieldSize(k);
  const out = Buffer.allocUnsafe(4 + 1 + varintSize(tmSize) + tmSize + 1 + varintSize(rawSize));
  out.set(PROTOBUF_PREFIX, 0);
  let p = 4;
  out[p++] = 0x0a;
  p = putVarint(out, p, tmSize);
  out[p++] = 0x0a;
  p = putVarint(out, p, av.length);
  out.set(av, p);
  p += av.length;
  out[p++] = 0x12;
  p = putVarint(out, p, k.length);
  out.set(k, p);
  p += k.length;
  out[p++] = 0x12;
  p = putVarint(out, p, rawSize);
  return out;
}

function writeListBody(out: Uint8Array, p: number, meta: Uint8Array, itemBytes: readonly Uint8Array[]): number {
  out[p++] = 0x0a;
  p = putVarint(out, p, meta.length);
  out.set(meta, p);
  p += meta.length;
  for (const item of itemBytes) {
    out[p++] = 0x12;
    p = putVarint(out, p, item.length);
    out.set(item, p);
    p += item.length;
  }
  return p;
}

// ---------------------------------------------------------------- envelope (type-independent)

/**
 * prefix + runtime.Unknown, as Go's protobuf serializer writes it: typeMeta (apiVersion and kind
 * always written), raw, then contentEncoding and contentType (always written, usually empty).
 */
export function encodeEnvelope(apiVersion: string, kind: string, raw: Uint8Array, contentEncoding = '', contentType = ''): Uint8Array {
  const ce = utf8Bytes(contentEncoding);
  const ct = utf8Bytes(contentType);
  const head = envelopeHead(apiVersion, kind, raw.length);
  const out = Buffer.allocUnsafe(head.length + raw.length + strFieldSize(ce) + strFieldSize(ct));
  out.set(head, 0);
  let p = head.length;
  out.set(raw, p);
  p += raw.length;
  out[p++] = 0x1a;
  p = putVarint(out, p, ce.length);
  out.set(ce, p);
  p += ce.length;
  out[p++] = 0x22;
  p = putVarint(out, p, ct.length);
  out.set(ct, p);
  return out;
}

/** true when the bytes start with the "k8s\0" prefix */
export function hasProtobufPrefix(buf: Uint8Array): boolean {
  return buf.length >= 4 && buf[0] === 0x6b && buf[1] === 0x38 && buf[2] === 0x73 && buf[3] === 0x00;
}

/** parses prefix + runtime.Unknown; rejects a missing or different prefix */
export function decodeEnvelope(buf: Uint8Array): Envelope {
  if (buf.length === 0) throw new ProtobufError('protobuf: empty data');
  if (!hasProtobufPrefix(buf)) {
    throw new ProtobufError('protobuf: provided data does not appear to be a protobuf message, expected prefix 6b 38 73 00 ("k8s\\0")');
  }
  if (buf.length === 4) throw new ProtobufError('protobuf: empty body after the prefix');
  const r = new Reader(buf, 4);
  const end = buf.length;
  const env: Envelope = { apiVersion: '', kind: '', raw: EMPTY, contentEncoding: '', contentType: '' };
  try {
    while (r.pos < end) {
      const t = r.u32();
      switch (t) {
        case 0x0a: {
          const e = r.sub(end);
          while (r.pos < e) {
            const u = r.u32();
            if (u === 0x0a) env.apiVersion = r.str(e);
            else if (u === 0x12) env.kind = r.str(e);
            else if (u >>> 3 === 1 || u >>> 3 === 2) throw new ProtobufError(`protobuf: TypeMeta: field ${u >>> 3} has wrong wire type ${u & 7}`);
            else r.skip(u, e);
          }
          r.checkEnd(e, 'TypeMeta');
          break;
        }
        case 0x12:
          env.raw = r.bytesView(end);
          break;
        case 0x1a:
          env.contentEncoding = r.str(end);
          break;
        case 0x22:
          env.contentType = r.str(end);
          break;
        default:
          if (t >>> 3 >= 1 && t >>> 3 <= 4) throw new ProtobufError(`protobuf: Unknown: field ${t >>> 3} has wrong wire type ${t & 7}`);
          if (t < 8) throw new ProtobufError('protobuf: Unknown: illegal field number 0');
          r.skip(t, end);
      }
    }
    r.checkEnd(end, 'Unknown');
  } catch (e) {
    throw wrapError(e);
  }
  return env;
}

/** the object message inside a full body, as a view (for building lists from cached bodies) */
export function messageOfObject(body: Uint8Array): Uint8Array {
  return decodeEnvelope(body).raw;
}

// ---------------------------------------------------------------- watch

/**
 * One frame of a protobuf watch stream, as the Kubernetes API server writes it: a 4-byte
 * big-endian length, then a metav1.WatchEvent message {1 type, 2 object RawExtension{1 raw}}.
 * The frame itself has no prefix or envelope (the stream serializer is the raw protobuf
 * serializer); `raw` holds the object's full body, prefix and envelope included, which client-go
 * decodes with the ordinary protobuf serializer (rest/watch/decoder.go).
 */
export function encodeWatchEventFrame(type: string, objectBody: Uint8Array): Uint8Array {
  const t = utf8Bytes(type);
  const rawExt = 1 + varintSize(objectBody.length) + objectBody.length;
  const msg = strFieldSize(t) + 1 + varintSize(rawExt) + rawExt;
  if (msg > 0xffffffff) throw new ProtobufError('protobuf: watch event larger than 4 GiB');
  const out = Buffer.allocUnsafe(4 + msg);
  out.writeUInt32BE(msg, 0);
  let p = 4;
  out[p++] = 0x0a;
  p = putVarint(out, p, t.length);
  out.set(t, p);
  p += t.length;
  out[p++] = 0x12;
  p = putVarint(out, p, rawExt);
  out[p++] = 0x0a;
  p = putVarint(out, p, objectBody.length);
  out.set(objectBody, p);
  return out;
}

/** parses one WatchEvent message (a frame without its length) */
export function decodeWatchEvent(msg: Uint8Array): WatchEventFrame {
  const r = new Reader(msg);
  const end = msg.length;
  let type = '';
  let object: Uint8Array = EMPTY;
  try {
    while (r.pos < end) {
      const t = r.u32();
      if (t === 0x0a) type = r.str(end);
      else if (t === 0x12) {
        const e = r.sub(end);
        while (r.pos < e) {
          const u = r.u32();
          if (u === 0x0a) object = r.bytesView(e);
          else if (u >>> 3 === 1) throw new ProtobufError(`protobuf: RawExtension: field 1 has wrong wire type ${u & 7}`);
          else r.skip(u, e);
        }
        r.checkEnd(e, 'RawExtension');
      } else if (t >>> 3 === 1 || t >>> 3 === 2) throw new ProtobufError(`protobuf: WatchEvent: field ${t >>> 3} has wrong wire type ${t & 7}`);
      else if (t < 8) throw new ProtobufError('protobuf: WatchEvent: illegal field number 0');
      else r.skip(t, end);
    }
    r.checkEnd(end, 'WatchEvent');
  } catch (e) {
    throw wrapError(e);
  }
  return { type, object };
}

/**
 * Reads a protobuf watch stream chunk by chunk: push() returns the events completed so far.
 * A frame longer than maxFrame bytes is an error (a corrupt or hostile length).
 */
export class WatchFrameDecoder {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxFrame = 256 * 1024 * 1024) {}

  push(chunk: Uint8Array): WatchEventFrame[] {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const out: WatchEventFrame[] = [];
    for (;;) {
      if (this.pendingBytes < 4) break;
      const buf = this.flatten();
      const len = ((buf[0] << 24) | (buf[1] << 16) | (buf[2] << 8) | buf[3]) >>> 0;
      if (len > this.maxFrame) throw new ProtobufError(`protobuf: watch frame of ${len} bytes exceeds the limit of ${this.maxFrame}`);
      if (buf.length < 4 + len) break;
      out.push(decodeWatchEvent(buf.subarray(4, 4 + len)));
      const rest = buf.subarray(4 + len);
      this.pending = rest.length ? [rest] : [];
      this.pendingBytes = rest.length;
    }
    return out;
  }

  /** bytes received but not yet part of a complete frame */
  get buffered(): number {
    return this.pendingBytes;
  }

  private flatten(): Uint8Array {
    if (this.pending.length === 1) return this.pending[0];
    const all = Buffer.concat(this.pending);
    this.pending = [all];
    return all;
  }
}

/** all complete frames of a buffer; a trailing partial frame is an error */
export function decodeWatchEventFrames(buf: Uint8Array): WatchEventFrame[] {
  const d = new WatchFrameDecoder();
  const events = d.push(buf);
  if (d.buffered !== 0) throw new ProtobufError(`protobuf: watch stream ends inside a frame (${d.buffered} bytes left over)`);
  return events;
}

// ---------------------------------------------------------------- the default codec

/** the codec over the generated schema (schema/gen) */
export const defaultCodec = new ProtobufCodec(getType, schemaTypeForKind);

export function encodeMessage(typeName: string, obj: unknown): Uint8Array {
  return defaultCodec.encodeMessage(typeName, obj);
}

export function decodeMessage(typeName: string, bytes: Uint8Array): unknown {
  return defaultCodec.decodeMessage(typeName, bytes);
}

export function encodeObject(obj: unknown, as?: { apiVersion: string; kind: string }): Uint8Array {
  return defaultCodec.encodeObject(obj, as);
}

export function decodeObject(buf: Uint8Array, defaults?: { apiVersion?: string; kind?: string }): Record<string, unknown> {
  return defaultCodec.decodeObject(buf, defaults);
}

export function encodeListFromItems(listTypeName: string, listMeta: unknown, itemBytes: readonly Uint8Array[]): Uint8Array {
  return defaultCodec.encodeListFromItems(listTypeName, listMeta, itemBytes);
}

export function encodeListObjectFromItems(apiVersion: string, kind: string, listMeta: unknown, itemBytes: readonly Uint8Array[]): Uint8Array {
  return defaultCodec.encodeListObjectFromItems(apiVersion, kind, listMeta, itemBytes);
}

export function encodeListObjectChunks(
  apiVersion: string,
  kind: string,
  listMeta: unknown,
  itemBytes: readonly Uint8Array[],
  chunkSize?: number,
): Generator<Uint8Array, void, undefined> {
  return defaultCodec.encodeListObjectChunks(apiVersion, kind, listMeta, itemBytes, chunkSize);
}

/** the TypeDecl for an apiVersion and kind, with the meta.k8s.io fallbacks (see ProtobufCodec.typeOfKind) */
export function typeOfKind(apiVersion: string, kind: string): TypeDecl | undefined {
  return defaultCodec.typeOfKind(apiVersion, kind);
}

/** whether a kind has a protobuf form (see ProtobufCodec.supportsProtobuf) */
export function supportsProtobuf(apiVersion: string, kind: string): boolean {
  return defaultCodec.supportsProtobuf(apiVersion, kind);
}

/** a watch frame for an event whose object is given in JSON form */
export function encodeWatchEventFrameForObject(type: string, obj: unknown): Uint8Array {
  return encodeWatchEventFrame(type, defaultCodec.encodeObject(obj));
}
