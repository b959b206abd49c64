// Content negotiation: which representation a response is written in (from Accept), and how a
// request body is read (from Content-Type), with Kubernetes' rules: a list of media types with
// fallbacks and q values; `as=Table` / `as=PartialObjectMetadata(List)` with `g=meta.k8s.io` and
// `v=v1` (or v1beta1) select the server-side transformations; 406 when nothing listed is served.

export const JSON_TYPE = 'application/json';
export const YAML_TYPE = 'application/yaml';
export const PROTOBUF_TYPE = 'application/vnd.kubernetes.protobuf';
export const CBOR_TYPE = 'application/cbor';
export const CBOR_SEQ_TYPE = 'application/cbor-seq';

export type Encoding = 'json' | 'yaml' | 'protobuf' | 'cbor';
export type Transform = '' | 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

export interface MediaRange {
  type: string; // 'application'
  subtype: string; // 'json'
  params: Record<string, string>;
  q: number;
}

/** Parse an Accept (or Content-Type) header into media ranges, in header order. */
export function parseMediaRanges(header: string | undefined): MediaRange[] {
  if (!header) return [];
  const out: MediaRange[] = [];
  for (const part of splitOutsideQuotes(header, ',')) {
    const p = part.trim();
    if (!p) continue;
    const segs = splitOutsideQuotes(p, ';');
    const full = segs[0]!.trim().toLowerCase();
    const slash = full.indexOf('/');
    const type = slash < 0 ? full : full.slice(0, slash);
    const subtype = slash < 0 ? '' : full.slice(slash + 1);
    const params: Record<string, string> = {};
    let q = 1;
    for (const s of segs.slice(1)) {
      const eq = s.indexOf('=');
      if (eq < 0) continue;
      const k = s.slice(0, eq).trim().toLowerCase();
      let v = s.slice(eq + 1).trim();
      if (v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
      if (k === 'q') {
        const n = Number(v);
        q = Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 1;
      } else params[k] = v;
    }
    out.push({ type, subtype, params, q });
  }
  return out;
}

function splitOutsideQuotes(s: string, sep: string): string[] {
  if (!s.includes('"')) return s.split(sep);
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (const c of s) {
    if (c === '"') quoted = !quoted;
    if (c === sep && !quoted) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

export interface OutputChoice {
  encoding: Encoding;
  /** the media type written in the response Content-Type (without parameters) */
  mediaType: string;
  transform: Transform;
  /** the `v` of a transform (v1 or v1beta1) */
  transformVersion: string;
  /** includeObject for Tables */
  pretty: boolean;
}

export interface NegotiateOptions {
  /** the endpoint returns a collection (list) rather than one object */
  list: boolean;
  /** Table form is available for this endpoint */
  table: boolean;
  /** metadata-only form is available */
  metadata: boolean;
  /** protobuf is available for this endpoint */
  protobuf: boolean;
  /** CBOR is enabled (the CBORServingAndStorage gate) */
  cbor: boolean;
  /**
   * the metadata-only forms may be Protobuf even when the kind itself has no Protobuf form (custom
   * resources: Kubernetes serves their PartialObjectMetadata(List) in Protobuf, for metadata informers)
   */
  metadataProtobuf?: boolean;
}

export class NotAcceptableError extends Error {
  constructor(
    readonly accepted: string[],
    /** the metadata-only form asked for does not fit the answer (an object's for a list, or the reverse) */
    readonly shape?: 'PartialObjectMetadata' | 'PartialObjectMetadataList',
  ) {
    super(`only the following media types are accepted: ${accepted.join(', ')}`);
  }
}

function encodingOf(r: MediaRange, o: NegotiateOptions): { enc: Encoding; type: string } | undefined {
  const full = `${r.type}/${r.subtype}`;
  switch (full) {
    case 'application/json':
      return { enc: 'json', type: JSON_TYPE };
    case 'application/yaml':
      return { enc: 'yaml', type: YAML_TYPE };
    case 'application/vnd.kubernetes.protobuf':
      return o.protobuf ? { enc: 'protobuf', type: PROTOBUF_TYPE } : undefined;
    case 'application/cbor':
      return o.cbor ? { enc: 'cbor', type: CBOR_TYPE } : undefined;
    case 'application/*':
    case '*/*':
      return { enc: 'json', type: JSON_TYPE };
    default:
      return undefined;
  }
}

// Clients send the same few Accept headers again and again: the choice for each (with the options
// and pretty) is kept, and every caller gets its own copy.
const MAX_CHOICES = 512;
/** by the options' bits (see negotiateOutput), then by Accept header */
const choices: (Map<string, OutputChoice> | undefined)[] = new Array(128);

/**
 * Choose the response representation from an Accept header. Candidates are tried in order of q
 * (stable for equal q); a candidate with `as=` is taken only when that transformation applies.
 */
export function negotiateOutput(accept: string | undefined, o: NegotiateOptions, pretty = false): OutputChoice {
  if (!accept) return { encoding: 'json', mediaType: JSON_TYPE, transform: '', transformVersion: '', pretty };
  // one map of Accept headers per combination of the options (a key joined from both was a new
  // string to flatten and hash on every request)
  const flags = (o.list ? 1 : 0) | (o.table ? 2 : 0) | (o.metadata ? 4 : 0) | (o.protobuf ? 8 : 0) | (o.cbor ? 16 : 0) | (o.metadataProtobuf ? 32 : 0) | (pretty ? 64 : 0);
  const byAccept = (choices[flags] ??= new Map());
  let c = byAccept.get(accept);
  if (!c) {
    c = chooseOutput(accept, o, pretty);
    if (byAccept.size >= MAX_CHOICES) byAccept.clear();
    byAccept.set(accept, c);
  }
  return { ...c };
}

function chooseOutput(accept: string, o: NegotiateOptions, pretty: boolean): OutputChoice {
  const ranges = parseMediaRanges(accept);
  if (ranges.length === 0) return { encoding: 'json', mediaType: JSON_TYPE, transform: '', transformVersion: '', pretty };
  const ordered = ranges.map((r, i) => ({ r, i })).sort((a, b) => b.r.q - a.r.q || a.i - b.i);
  for (const { r } of ordered) {
    if (r.q === 0) continue;
    const as = r.params['as'];
    const e =
      encodingOf(r, o) ??
      (o.metadataProtobuf && (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') && `${r.type}/${r.subtype}` === PROTOBUF_TYPE
        ? { enc: 'protobuf' as const, type: PROTOBUF_TYPE }
        : undefined);
    if (!e) continue;
    if (as) {
      const g = r.params['g'];
      const v = r.params['v'];
      if (g !== 'meta.k8s.io' || (v !== 'v1' && v !== 'v1beta1')) continue;
      if (as === 'Table') {
        if (!o.table) continue;
        // Kubernetes serves Table in JSON and YAML only (it has no Protobuf form, and the CBOR
        // serializer is not offered for it): with another encoding the clause is skipped
        if (e.enc !== 'json' && e.enc !== 'yaml') continue;
        return { encoding: e.enc, mediaType: e.type, transform: 'Table', transformVersion: v, pretty: pretty || r.params['pretty'] === '1' };
      }
      if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') {
        if (!o.metadata) continue;
        // PartialObjectMetadata for objects, PartialObjectMetadataList for collections: Kubernetes
        // takes the first such clause whatever its shape, and fails the answer when it does not fit
        if (o.list !== (as === 'PartialObjectMetadataList')) throw new NotAcceptableError([], as);
        return { encoding: e.enc, mediaType: e.type, transform: as, transformVersion: v, pretty: pretty || r.params['pretty'] === '1' };
      }
      continue;
    }
    return { encoding: e.enc, mediaType: e.type, transform: '', transformVersion: '', pretty: pretty || r.params['pretty'] === '1' };
  }
  const accepted = [JSON_TYPE, YAML_TYPE];
  if (o.protobuf) accepted.push(PROTOBUF_TYPE);
  if (o.cbor) accepted.push(CBOR_TYPE);
  throw new NotAcceptableError(accepted);
}

/**
 * Choose the representation of a watch stream. YAML has no stream framing: a watch that
 * negotiates YAML is 406, as in Kubernetes, and the 406 lists the stream media types.
 */
export function negotiateWatch(accept: string | undefined, o: NegotiateOptions): OutputChoice {
  const streamTypes = [`${JSON_TYPE};stream=watch`];
  if (o.protobuf) streamTypes.push(`${PROTOBUF_TYPE};stream=watch`);
  if (o.cbor) streamTypes.push(CBOR_SEQ_TYPE);
  let c: OutputChoice;
  try {
    c = negotiateOutput(accept, { ...o, list: false }, false);
  } catch (e) {
    if (e instanceof NotAcceptableError) throw new NotAcceptableError(streamTypes);
    throw e;
  }
  if (c.encoding === 'yaml') throw new NotAcceptableError(streamTypes);
  return c;
}

/**
 * Whether the response is indented, as Kubernetes decides it: `pretty` in the query (Go's
 * ParseBool: 1, t, T, TRUE, true, True), else a User-Agent of a browser, curl or Wget.
 */
export function prettyRequested(pretty: string | null | undefined, userAgent: string | undefined): boolean {
  if (pretty !== null && pretty !== undefined && pretty !== '') return ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(pretty);
  const ua = userAgent ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}

export interface InputChoice {
  encoding: Encoding;
  mediaType: string;
}

/** The encoding of a request body from its Content-Type; undefined when not supported. */
export function inputEncoding(contentType: string | undefined, o: { protobuf: boolean; cbor: boolean }): InputChoice | undefined {
  if (!contentType || contentType === JSON_TYPE || contentType.trim() === '') return { encoding: 'json', mediaType: JSON_TYPE };
  const r = parseMediaRanges(contentType)[0];
  if (!r) return { encoding: 'json', mediaType: JSON_TYPE };
  const full = `${r.type}/${r.subtype}`;
  switch (full) {
    case 'application/json':
      return { encoding: 'json', mediaType: JSON_TYPE };
    case 'application/yaml':
      return { encoding: 'yaml', mediaType: YAML_TYPE };
    case 'application/vnd.kubernetes.protobuf':
      return o.protobuf ? { encoding: 'protobuf', mediaType: PROTOBUF_TYPE } : undefined;
    case 'application/cbor':
      return o.cbor ? { encoding: 'cbor', mediaType: CBOR_TYPE } : undefined;
    default:
      return undefined;
  }
}

export function supportedInputTypes(o: { protobuf: boolean; cbor: boolean }): string[] {
  const t = [JSON_TYPE, YAML_TYPE];
  if (o.protobuf) t.push(PROTOBUF_TYPE);
  if (o.cbor) t.push(CBOR_TYPE);
  return t;
}
