// The verb handlers of the resource API: get, list, watch, create, update, delete,
// deletecollection and the status subresource, with Kubernetes' query parameters and the full
// resourceVersion semantics of get, list and watch.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseFirstYAMLDocument, yaml } from '../codec/yaml-lazy.js';
import { errors, field, StatusError, type FieldError } from '../machinery/errors.js';
import { fieldValue, matchLabels, selectableField, parseFieldSelector, parseLabelSelector, SelectorParseError, type FieldTerm, type Requirement } from '../machinery/selectors.js';
import { inputEncoding, negotiateOutput, negotiateWatch, NotAcceptableError, prettyRequested, supportedInputTypes, type OutputChoice } from '../codec/negotiate.js';
import { decodeEnvelope, decodeMessage, supportsProtobuf } from '../codec/protobuf.js';
import { APPLY_PATCH_CBOR_MEDIA_TYPE, CBORDecodeError, cborDecodeStatusMessage, decodeApplyPatchCBOR, decodeCBORObject, decodeCBORValue } from '../codec/cbor.js';
import type { KindDecl } from '../schema/model.js';
import { BUILTIN_KINDS } from '../schema/kinds.js';
import { goJSONKind } from '../machinery/gostrings.js';
import type { CacheEntry } from '../storage/cacher.js';
import { cacheEntry, TooOldError } from '../storage/cacher.js';
import { CompactedError } from '../storage/interface.js';
import { emptyListBlueprint, writeEntry, writeList, writeObject, writeStatusError, writeView, type IncludeObject, type ListMeta, type TableOptions } from './encode.js';
import type { RequestInfo } from './requestinfo.js';
import { queryBool } from './requestinfo.js';
import { CorruptObjectError, type ResourceStore, type WriteAdmission } from './registry/store.js';
import type { AdmissionChain } from './admission/chain.js';
import type { WatchRegistry } from './watch.js';
import { normalize } from '../codec/json.js';
import { jsonHasNoDuplicates, jsonPatchStrictProblems, jsonStrictProblems, yamlDuplicateFields } from '../codec/duplicates.js';
import { exactInteger, exactJSON, inInt64, narrowBigInts, parseJSON, parseJSONExact, stringifyJSON, type Int64 } from '../codec/int64.js';
import type { Verbatim, VerbatimSpan } from '../codec/verbatim.js';
import { GoRepr, goQuote, notSupported } from '../schema/validation/errs.js';
import { goJSONSyntaxError } from '../schema/validation/gojson.js';
import { sprintf, toUnstructuredValues } from '../kubectl/gofmt.js';

/**
 * Strict-decoding problems of a decoded body, found while decoding (they need the body's text),
 * reported by normalizeBody per fieldValidation: for JSON every duplicate and unknown field in
 * document order (`complete`), for YAML the duplicated keys (unknown fields come from normalize).
 */
type StrictProblems = {
  list: string[];
  warnings: string[];
  complete: boolean;
  verbatim?: Verbatim;
  /** a JSON text found free of duplicates, not yet scanned for unknown fields: scanned when normalize finds one */
  rescan?: { text: string; typeName: string | undefined };
  /** the JSON body's text: normalize reads its number literals (`1.0` is no integer to Go) */
  text?: string;
};
const NO_PROBLEMS: string[] = [];
// kept on the decoded object itself under a non-enumerable symbol (nothing that reads or copies
// the object sees it): a WeakMap entry per write costs the garbage collector far more
const STRICT_PROBLEMS = Symbol('strict decoding problems');
const strictFallback = new WeakMap<object, StrictProblems>();
// The last decoded body's problems wait in a slot first: a create or an update decodes its body
// and reads them back in the same turn of the event loop (normalizeBody, then verbatimOf, which
// frees the slot), so they are mostly never put on the object (defineProperty changes the
// object's shape, a runtime call on every write). A body decoded while the slot still holds
// another's (a handler that never asked for the verbatim values) moves that one onto its object.
let slotObj: object | undefined;
let slotProblems: StrictProblems | undefined;
function attach(obj: object, p: StrictProblems): void {
  if (Object.isExtensible(obj)) Object.defineProperty(obj, STRICT_PROBLEMS, { value: p, configurable: true });
  else strictFallback.set(obj, p);
}
const strictProblems = {
  set(obj: object, p: StrictProblems): void {
    if (slotObj !== undefined && slotObj !== obj) attach(slotObj, slotProblems!);
    slotObj = obj;
    slotProblems = p;
  },
  get(obj: object): StrictProblems | undefined {
    if (obj === slotObj) return slotProblems;
    return (obj as { [STRICT_PROBLEMS]?: StrictProblems })[STRICT_PROBLEMS] ?? strictFallback.get(obj);
  },
  /** the body's problems have been read for the last time: its slot is free, and they are forgotten */
  done(obj: object): void {
    if (obj !== slotObj) return;
    slotObj = undefined;
    slotProblems = undefined;
  },
};

/** Kubernetes' YAML-to-JSON conversion reports duplicated keys as one error */
function yamlStrictError(lines: string[]): string {
  return `yaml: unmarshal errors:\n  ${lines.join('\n  ')}`;
}
import { subresourceView } from './subresources.js';
import { scopeOf } from './limits.js';
import { applyDefaults } from '../schema/defaults/index.js';
import type { Authorizer, UserInfo } from './authz.js';
import { authorizeCreateOnWrite, authorizeUnsafeDelete, requestAttributes, type RBACResource } from './rbac/index.js';
import { apply as ssaApply, managerOrUserAgent, resetFieldsFor, trackUpdate, validateFieldManager, type ManagerInfo } from '../patch/ssa/index.js';
import { parentManagedFields, scaleManagedFields } from '../patch/ssa/scale.js';
import { applyJSONPatch } from '../patch/jsonpatch.js';
import { applyMergePatch } from '../patch/mergepatch.js';
import { jsonPatchLiterals, mergePatchLiterals, withLiterals } from '../patch/literals.js';
import { applyStrategicMergePatch } from '../patch/strategic.js';
import { asRequestError } from '../patch/errors.js';
import { BodyTooDeepError, jsonNestsDeeperThan, tooDeepMessage, valueNestsDeeperThan, yamlNestsDeeperThan } from '../codec/depth.js';

/** Kubernetes' request body limit (3 MiB). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;
/** how long a read waits for the cache to reach a requested resourceVersion before 504 */
const FRESHNESS_WAIT_MS = 3000;

export interface HandlerContext {
  watches: WatchRegistry;
  /** minimum watch timeout: watches without timeoutSeconds end after a random time between this and twice this */
  minRequestTimeoutMs: number;
  cbor: boolean;
  /** the WatchList feature gate: streaming lists (sendInitialEvents) are served, and a watch from "" or "0" is one */
  watchList: boolean;
  /** the storage's current revision (a consistent read waits for the cache to reach it) */
  currentRevision(): Promise<number>;
  /** the same, when known without asking the storage (see Backend.revisionNow) */
  revisionNow?(): number | undefined;
  /** the escalation check of a write of an RBAC object (no granting what the writer lacks) */
  checkWrite?(w: { user: UserInfo; resource: RBACResource; namespace: string; requestName: string; obj: any; old?: any }): StatusError | undefined;
  /** the authorizer, for create-on-write and unsafe deletes */
  authorizer?(): Authorizer;
  /** the admission chain every user's write passes */
  admission?: AdmissionChain;
}

const ANONYMOUS: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

/**
 * The admission of a write: the chain, the request's URL facts, its options (dryRun,
 * fieldManager, fieldValidation, as given; the store names their kind by operation), its user
 * and its warnings list.
 */
export function admissionOf(r: RequestBase, options: Record<string, unknown> = {}, name = r.info.name): WriteAdmission | undefined {
  const chain = r.ctx.admission;
  if (!chain) return undefined;
  const q = r.query;
  const opts: Record<string, unknown> = {};
  // (a request without a query, the common case, reads none of its parameters)
  if (q.size > 0) {
    const dry = q.getAll('dryRun').filter((v) => v !== '');
    if (dry.length) opts.dryRun = dry;
    const fm = q.get('fieldManager');
    if (fm) opts.fieldManager = fm;
    const fv = q.get('fieldValidation');
    if (fv) opts.fieldValidation = fv;
  }
  // the request's deadline stops its write from reaching storage; plugins annotate its audit event
  const scope = scopeOf(r.req);
  return {
    chain,
    deadline: scope?.deadline,
    request: {
      namespace: r.info.namespace,
      name,
      subresource: r.info.subresource || undefined,
      options: { ...opts, ...options },
      user: r.user ?? ANONYMOUS,
      warnings: r.warnings,
      auditAnnotations: scope?.auditAnnotations,
      latency: scope,
    },
  };
}

/** RBAC objects may only grant what their writer holds (unless it may escalate or bind) */
function rbacWriteCheck(r: Request, obj: any, old: any | undefined): void {
  const k = r.store.kind;
  if (k.group !== 'rbac.authorization.k8s.io' || !r.user || !r.ctx.checkWrite) return;
  const err = r.ctx.checkWrite({ user: r.user, resource: k.resource as RBACResource, namespace: r.info.namespace, requestName: r.info.name, obj, old });
  if (err) throw err;
}

/** a PUT or apply that creates needs `create` as well */
function createOnWriteCheck(r: Request): void {
  const az = r.ctx.authorizer?.();
  if (!az || !r.user) return;
  const err = authorizeCreateOnWrite(az, requestAttributes(r.user, r.info, r.req.method ?? 'PUT', r.query));
  if (err) throw err;
}

export interface Request {
  req: IncomingMessage;
  res: ServerResponse;
  info: RequestInfo;
  query: URLSearchParams;
  store: ResourceStore;
  ctx: HandlerContext;
  /** warnings to send as Warning headers */
  warnings: string[];
  /** the authenticated user */
  user?: UserInfo;
}

/** what body decoding and negotiation need of a request (virtual resources have no store) */
export type RequestBase = Pick<Request, 'req' | 'res' | 'info' | 'query' | 'ctx' | 'warnings' | 'user'>;

/**
 * A watch's sendInitialEvents and resourceVersionMatch, defaulted as SetListOptionsDefaults
 * defaults them (with WatchList on, a watch from "" or "0" that names neither is a streaming
 * list) and checked as validateWatchOptions checks them: a 400 for a combination it refuses.
 */
export function watchOptions(query: URLSearchParams, watchList: boolean): { sie: boolean | undefined; match: string } {
  const rv = query.get('resourceVersion');
  let sie = query.has('sendInitialEvents') ? queryBool(query.get('sendInitialEvents')) : undefined;
  let match = query.get('resourceVersionMatch') ?? '';
  if (watchList && sie === undefined && match === '' && (rv === null || rv === '' || rv === '0')) {
    sie = true;
    match = 'NotOlderThan';
  }
  const errs: FieldError[] = [];
  if (sie !== undefined) {
    if (match !== 'NotOlderThan') errs.push(field.forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    if (!watchList) errs.push(field.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'));
  }
  if (match !== '') {
    if (sie === undefined) errs.push(field.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    if (match !== 'NotOlderThan') errs.push(field.notSupported('resourceVersionMatch', match, ['NotOlderThan']));
    if (query.get('continue')) errs.push(field.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  }
  if (errs.length) throw badListOptions(errs);
  return { sie, match };
}

function badListOptions(errs: FieldError[]): StatusError {
  // Kubernetes reports these as an Invalid ListOptions; Keelson answers them with 400 Bad Request,
  // keeping Kubernetes' wording and causes.
  const inv = errors.invalid({ group: 'meta.k8s.io', name: 'ListOptions' }, '', errs);
  return new StatusError(400, 'BadRequest', inv.message, inv.details);
}

/** whether the endpoint's kind has a Protobuf form (custom resources have none, as in Kubernetes) */
function protobufOf(r: Pick<RequestBase, 'req'>): boolean {
  const store = (r as Partial<Request>).store;
  return store ? protobufFor(store.kind) : true;
}

// whether a kind has a protobuf form, kept per kind declaration: the lookup builds its key
// strings anew on every call, and every request asked it once or twice
const PROTOBUF_OF_KIND = new WeakMap<object, boolean>();
function protobufFor(kind: Pick<KindDecl, 'group' | 'version' | 'kind'>): boolean {
  let v = PROTOBUF_OF_KIND.get(kind);
  if (v === undefined) {
    v = supportsProtobuf(kind.group ? `${kind.group}/${kind.version}` : kind.version, kind.kind);
    PROTOBUF_OF_KIND.set(kind, v);
  }
  return v;
}

/** the response representation; `table: false` for endpoints without a Table form (virtual kinds) */
/**
 * A created object's namespace is the request's (Kubernetes' EnsureObjectNamespaceMatchesRequestNamespace):
 * an empty one is filled in, another is 400, and a cluster-scoped kind's is cleared.
 */
export function ensureRequestNamespace(kind: Pick<KindDecl, 'namespaced'>, obj: any, requestNamespace: string): void {
  const md = (obj.metadata ??= {});
  if (!kind.namespaced) {
    delete md.namespace;
    return;
  }
  if (md.namespace === undefined || md.namespace === '') md.namespace = requestNamespace;
  else if (md.namespace !== requestNamespace) throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
}

export function outputChoice(r: RequestBase, list: boolean, forms: { table?: boolean; kind?: Pick<KindDecl, 'kind' | 'version' | 'custom'> } = {}): OutputChoice {
  const pretty = prettyRequested(r.query.get('pretty'), r.req.headers['user-agent']);
  try {
    return negotiateOutput(r.req.headers.accept, { list, table: forms.table ?? true, metadata: true, protobuf: protobufOf(r), cbor: r.ctx.cbor, metadataProtobuf: true }, pretty);
  } catch (e) {
    if (e instanceof NotAcceptableError && e.shape) {
      // the Go type of the answer, as kube-apiserver names it
      const k = forms.kind ?? (r as Partial<Request>).store?.kind;
      const type = k ? (k.custom ? 'unstructured.Unstructured' : `${k.version}.${k.kind}`) + (list ? 'List' : '') : list ? 'List' : 'Object';
      throw errors.notAcceptable(
        e.shape === 'PartialObjectMetadataList'
          ? `you requested PartialObjectMetadataList, but the requested object is not a list (*${type})`
          : `you requested PartialObjectMetadata, but the requested object is a list (*${type})`,
      );
    }
    if (e instanceof NotAcceptableError) throw errors.notAcceptable(e.message);
    throw e;
  }
}

function tableOptions(q: URLSearchParams): TableOptions {
  const io = q.get('includeObject');
  if (io === null || io === '') return { includeObject: 'Metadata' };
  // (ValidateTableOptions' words, which kube-apiserver answers before converting)
  if (io !== 'None' && io !== 'Metadata' && io !== 'Object') {
    throw errors.badRequest(`Unable to convert to Table as requested: includeObject: Invalid value: ${goQuote(io)}: must be 'Metadata', 'Object', 'None', or empty`);
  }
  return { includeObject: io as IncludeObject };
}

// ---- selectors ----

export interface Selection {
  labels: Requirement[];
  fields: FieldTerm[];
  filter?: (e: CacheEntry) => boolean;
}

// a kind's selectable fields by their selector names, parsed once per kind (a list or a watch with a field selector reads them)
const selectablePathsByKind = new WeakMap<KindDecl, Map<string, string>>();
function selectablePaths(kind: KindDecl): Map<string, string> {
  let m = selectablePathsByKind.get(kind);
  if (m === undefined) {
    m = new Map();
    for (const f of kind.selectableFields) {
      const { label, path } = selectableField(f);
      m.set(label, path);
    }
    selectablePathsByKind.set(kind, m);
  }
  return m;
}

export function selection(kind: KindDecl, q: URLSearchParams, name?: string): Selection {
  let labels: Requirement[] = [];
  let fields: FieldTerm[] = [];
  try {
    labels = parseLabelSelector(q.get('labelSelector') ?? '');
    fields = parseFieldSelector(q.get('fieldSelector') ?? '');
  } catch (e) {
    if (e instanceof SelectorParseError) throw errors.badRequest(e.message);
    throw e;
  }
  const getters: ((e: CacheEntry) => string)[] = [];
  for (const t of fields) {
    if (t.field === 'metadata.name') getters.push((e) => e.name);
    else if (t.field === 'metadata.namespace') getters.push((e) => e.namespace);
    else {
      const path = selectablePaths(kind).get(t.field);
      if (path === undefined) {
        if (kind.selectableFields.length > 0 || kind.custom) throw errors.badRequest(`field label not supported: ${t.field}`);
        throw errors.badRequest(`"${t.field}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
      }
      const steps = path.split('.');
      getters.push((e) => e.keptField(path) ?? fieldValue(e.obj, steps));
    }
  }
  if (name !== undefined) {
    const exact = fields.find((t) => t.field === 'metadata.name' && t.op === '=');
    if (fields.length > 0 && (!exact || exact.value !== name)) throw errors.badRequest("fieldSelector metadata.name doesn't match requested name");
    if (fields.length === 0) {
      fields = [{ field: 'metadata.name', op: '=', value: name }];
      getters.push((e) => e.name);
    }
  }
  if (labels.length === 0 && fields.length === 0) return { labels, fields };
  const fs = fields;
  const filter = (e: CacheEntry): boolean => {
    if (labels.length && !matchLabels(labels, e.labels)) return false;
    for (let i = 0; i < fs.length; i++) {
      const t = fs[i]!;
      const eq = getters[i]!(e) === t.value;
      if (eq !== (t.op === '=')) return false;
    }
    return true;
  };
  return { labels, fields, filter };
}

// ---- resourceVersion ----

/**
 * A resourceVersion parameter as a number; 400 when it is not one. A list words it as storage's
 * ValidateListOptions does (the versioner's field error inside); a get or a watch, where
 * Kubernetes answers the versioner's bare error with a 500, is worded as the parse failure alone.
 */
function parseRV(rv: string, list = false): number {
  const why = !/^\d+$/.test(rv) ? 'invalid syntax' : !Number.isSafeInteger(Number(rv)) ? 'value out of range' : undefined;
  if (why === undefined) return Number(rv);
  const parse = `strconv.ParseUint: parsing ${JSON.stringify(rv)}: ${why}`;
  throw errors.badRequest(`invalid resource version: ${list ? `resourceVersion: Invalid value: ${JSON.stringify(rv)}: ${parse}` : parse}`);
}

/** wait until the cache holds at least revision rv; 504 Too large resource version otherwise */
async function waitFresh(store: ResourceStore, rv: number): Promise<void> {
  if (store.cacher.revision() >= rv) return;
  const ok = await store.cacher.waitUntilFresh(rv, FRESHNESS_WAIT_MS);
  if (!ok) throw errors.tooLargeResourceVersion(rv, store.cacher.revision(), 1);
}

/**
 * A consistent read: the cache must have caught up with storage's current revision. Undefined
 * (nothing to wait for, no promise: the common case) when the cache is known to be current.
 */
function waitConsistent(r: Request): Promise<void> | undefined {
  const known = r.ctx.revisionNow?.();
  if (known !== undefined && r.store.cacher.revision() >= known) return undefined;
  return catchUp(r, known);
}

async function catchUp(r: Request, known: number | undefined): Promise<void> {
  const cur = known ?? (await r.ctx.currentRevision());
  if (r.store.cacher.revision() >= cur) return;
  const ok = await r.store.cacher.waitUntilFresh(cur, FRESHNESS_WAIT_MS);
  if (!ok) throw errors.timeout('Too large resource version: the watch cache could not catch up with storage', 1);
}

// ---- get ----

/**
 * A write through a Pod's ephemeralcontainers subresource: the stored pod with the written one's
 * spec.ephemeralContainers, nothing else (kube-apiserver's dropNonEphemeralContainerUpdates);
 * an apply also keeps the managed fields it computed.
 */
function onlyEphemeralContainers(written: any, cur: any, isApply: boolean): any {
  const out = structuredClone(cur);
  out.spec ??= {};
  const ecs = written?.spec?.ephemeralContainers;
  if (ecs === undefined || ecs === null) delete out.spec.ephemeralContainers;
  else out.spec.ephemeralContainers = ecs;
  if (isApply) out.metadata.managedFields = written.metadata?.managedFields;
  return out;
}

/**
 * A write through a Pod's resize subresource: the stored pod with the written one's container
 * resources and resize policies (regular and init containers), nothing else (kube-apiserver's
 * dropNonResizeUpdates). When a list of containers was added to, shortened, reordered or renamed,
 * the written list is kept as it is, for validation to refuse.
 */
function onlyResize(written: any, cur: any, isApply: boolean): any {
  const out = structuredClone(cur);
  out.spec ??= {};
  const ws = written?.spec ?? {};
  const list = (v: unknown): any[] => (Array.isArray(v) ? v : []);
  const merge = (w: any[], c: any[]): any[] | undefined => {
    if (w.length !== c.length || w.some((x, i) => x?.name !== c[i]?.name)) return undefined;
    return c.map((ctr, i) => {
      const next = { ...ctr };
      for (const f of ['resources', 'resizePolicy']) {
        if (w[i]?.[f] === undefined || w[i]?.[f] === null) delete next[f];
        else next[f] = w[i][f];
      }
      return next;
    });
  };
  for (const f of ['containers', 'initContainers']) {
    const merged = merge(list(ws[f]), list(out.spec[f]));
    if (merged === undefined) out.spec[f] = ws[f];
    else if (out.spec[f] !== undefined) out.spec[f] = merged;
  }
  if (isApply) out.metadata.managedFields = written.metadata?.managedFields;
  return out;
}

/**
 * The subresources of a Pod that write a part of it, each with the function that takes that part
 * of a written Pod onto the stored one (PUT and PATCH alike; an apply keeps its managed fields).
 */
const POD_PARTS: Record<string, (written: any, cur: any, isApply: boolean) => any> = {
  __proto__: null as never,
  ephemeralcontainers: onlyEphemeralContainers,
  resize: onlyResize,
};

/** a subresource that answers GET with the object itself (its kind is the object's) */
function readsAsObject(kind: KindDecl, sub: string): boolean {
  const d = kind.subresources.find((s) => s.name === sub);
  return !!d && d.kind === kind.kind && d.group === kind.group && d.verbs.includes('get');
}

export async function handleGet(r: Request): Promise<void> {
  const { store, info, query } = r;
  // a subresource with no read (eviction, binding, token, finalize) has no GET route: 405 before
  // the object is looked for, as kube-apiserver's router answers
  if (info.subresource) {
    const sub = store.kind.subresources.find((x) => x.name === info.subresource);
    if (sub && !sub.verbs.includes('get')) throw methodNotAllowed();
  }
  const choice = outputChoice(r, false);
  const rv = query.get('resourceVersion');
  if (rv === null || rv === '') {
    const wait = waitConsistent(r);
    if (wait) await wait;
  } else if (rv !== '0') await waitFresh(store, parseRV(rv));
  const e = store.mustGet(info.namespace, info.name);
  // the status and every other subresource whose object is the object itself (a Pod's
  // ephemeralcontainers and resize, a CSR's approval) read as the object
  if (info.subresource === 'status' || info.subresource === '' || readsAsObject(store.kind, info.subresource)) {
    writeEntry(r.res, 200, store.kind, undefined, e, choice, choice.transform === 'Table' ? tableOptions(query) : undefined);
    return;
  }
  const view = subresourceView(store.kind, info.subresource);
  if (view) {
    writeView(r.res, 200, view.toView(e.obj), choice, view.view, choice.transform === 'Table' ? tableOptions(r.query) : undefined);
    return;
  }
  throw errors.notFoundPath();
}


// ---- list ----

interface ListPlan {
  mode: 'latest' | 'exact' | 'any';
  revision?: number;
  startKey?: string;
  limit: number;
  minRevision?: number;
  /** the continue token's position was relative to this prefix */
}

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
}

function encodeContinue(startKey: string, scopePrefix: string, rv: number): string {
  const tok: ContinueToken = { v: 'meta.k8s.io/v1', rv, start: startKey.slice(scopePrefix.length) };
  return Buffer.from(JSON.stringify(tok)).toString('base64url');
}

function decodeContinue(token: string, scopePrefix: string): { rv: number; startKey: string } {
  let c: ContinueToken;
  // Go's base64.RawURLEncoding and json.Unmarshal, with their errors (Node's decoder would skip
  // what is not base64, and its JSON errors are not Go's)
  const bad = /[^A-Za-z0-9_-]/.exec(token);
  if (bad || token.length % 4 === 1) {
    throw errors.badRequest(`invalid continue token: continue key is not valid: illegal base64 data at input byte ${bad ? bad.index : token.length - 1}`);
  }
  const raw = Buffer.from(token, 'base64url');
  try {
    c = JSON.parse(raw.toString('utf8'));
  } catch (e) {
    throw errors.badRequest(`invalid continue token: continue key is not valid: ${goJSONSyntaxError(raw) ?? (e as Error).message}`);
  }
  if (!c || typeof c !== 'object' || c.v !== 'meta.k8s.io/v1') {
    throw errors.badRequest(`invalid continue token: continue key is not valid: server does not recognize this encoded version ${c?.v ?? ''}`);
  }
  if (!c.rv) throw errors.badRequest('invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof c.start !== 'string' || c.start === '') throw errors.badRequest('invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)');
  let key = c.start.startsWith('/') ? c.start : '/' + c.start;
  const norm = normalizePath(key);
  if (norm !== key) throw errors.badRequest(`invalid continue token: continue key is not valid: ${c.start}`);
  key = key.slice(1);
  return { rv: Number(c.rv), startKey: scopePrefix + key };
}

function normalizePath(p: string): string {
  const out: string[] = [];
  for (const s of p.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') out.pop();
    else out.push(s);
  }
  let r = '/' + out.join('/');
  if (p.endsWith('/') && r !== '/') r += '/';
  // a trailing NUL (our "next key" marker) survives normalization
  return r;
}

export async function handleList(r: Request): Promise<void> {
  const choice = outputChoice(r, true);
  const sel = selection(r.store.kind, r.query);
  const { items, meta } = await readList(r, sel);
  writeList(r.res, r.store.kind, items, meta, choice, choice.transform === 'Table' ? tableOptions(r.query) : undefined);
}

/** the longest timeout, in seconds, a Node.js timer holds (2^31-1 ms) */
const MAX_TIMER_SECONDS = Math.floor(0x7fffffff / 1000);

/**
 * The integers of a list's or a watch's ListOptions (timeoutSeconds, limit), converted as
 * Kubernetes' parameter codec converts them before anything else is looked at: each with
 * strconv.ParseInt, so a value that is not an int64 (an empty one too) is a 400 with its message.
 */
export function listOptionNumbers(query: URLSearchParams): { timeoutSeconds?: number; limit?: number } {
  return { timeoutSeconds: int64Param(query, 'timeoutSeconds'), limit: int64Param(query, 'limit') };
}

/** an int64 query parameter (the first of its values) as Convert_Slice_string_To_int64 reads it; absent: undefined */
function int64Param(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null) return undefined;
  if (!/^[+-]?\d+$/.test(v)) throw errors.badRequest(`strconv.ParseInt: parsing ${goQuote(v)}: invalid syntax`);
  const n = BigInt(v);
  if (!inInt64(n)) throw errors.badRequest(`strconv.ParseInt: parsing ${goQuote(v)}: value out of range`);
  return Number(n);
}

/**
 * ValidateListOptions of a list (not a watch): the Invalid cells of the list table, in its order,
 * a 400 with them all.
 */
export function validateListQuery(query: URLSearchParams): void {
  const rv = query.get('resourceVersion');
  const rvm = query.get('resourceVersionMatch');
  const cont = query.get('continue') ?? '';
  const errs: FieldError[] = [];
  if (rvm !== null && rvm !== '') {
    if (rv === null || rv === '') errs.push(field.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (cont) errs.push(field.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (rvm !== 'Exact' && rvm !== 'NotOlderThan') errs.push(field.notSupported('resourceVersionMatch', rvm, ['Exact', 'NotOlderThan', '']));
    if (rvm === 'Exact' && rv === '0') errs.push(field.forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (query.has('sendInitialEvents')) errs.push(field.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  if (errs.length) throw badListOptions(errs);
}

/**
 * The list a request's options name (resourceVersion, resourceVersionMatch, limit, continue; each
 * checked as Kubernetes checks a list's options): the page of entries and its ListMeta. A list
 * reads it, and a deletecollection deletes what it reads.
 */
async function readList(r: Request, sel: Selection): Promise<{ items: CacheEntry[]; meta: ListMeta }> {
  const { store, info, query } = r;
  const rv = query.get('resourceVersion');
  const rvm = query.get('resourceVersionMatch');
  const cont = query.get('continue') ?? '';
  const limit = Math.max(0, listOptionNumbers(query).limit ?? 0);
  validateListQuery(query);
  const scope = store.scopePrefix(info.namespace);

  let plan: ListPlan;
  if (cont) {
    if (rv !== null && rv !== '' && rv !== '0') throw errors.badRequest('specifying resource version is not allowed when using continue');
    const c = decodeContinue(cont, scope);
    plan = c.rv > 0 ? { mode: 'exact', revision: c.rv, startKey: c.startKey, limit } : { mode: 'latest', startKey: c.startKey, limit };
  } else if (rv === null || rv === '') {
    await waitConsistent(r);
    plan = { mode: 'latest', limit };
  } else if (rv === '0') {
    // the watch cache serves "any" lists whole: the limit is ignored (computeListLimit), which
    // client-go's reflector counts on (a paged answer makes it page every later list at an exact version)
    plan = { mode: 'any', limit: 0 };
  } else {
    const n = parseRV(rv, true);
    if (rvm === 'Exact' || ((rvm === null || rvm === '') && limit > 0)) plan = { mode: 'exact', revision: n, limit };
    else plan = { mode: 'latest', minRevision: n, limit };
  }
  if (plan.minRevision !== undefined) await waitFresh(store, plan.minRevision);

  let items: CacheEntry[];
  let revision: number;
  let nextKey: string | undefined;
  let remaining: number | undefined;
  if (plan.mode === 'exact') {
    const at = plan.revision!;
    if (at > store.cacher.revision()) await waitFresh(store, at);
    try {
      const res = store.cacher.list({ prefix: scope, revision: at, startKey: plan.startKey, limit: plan.limit || undefined, filter: sel.filter });
      items = res.items;
      revision = res.revision;
      nextKey = res.continueKey;
      remaining = res.remaining;
    } catch (e) {
      if (!(e instanceof TooOldError)) throw e;
      const res = await listFromStorage(store, scope, at, plan.startKey, plan.limit, sel.filter, !!cont);
      items = res.items;
      revision = at;
      nextKey = res.nextKey;
      remaining = res.remaining;
    }
  } else {
    const res = store.cacher.list({ prefix: scope, startKey: plan.startKey, limit: plan.limit || undefined, filter: sel.filter });
    items = res.items;
    revision = res.revision;
    nextKey = res.continueKey;
    remaining = res.remaining;
  }
  // an object of this page's range that cannot be read fails the list, as in Kubernetes
  const unreadable = store.listReadError(scope, plan.startKey, nextKey);
  if (unreadable) throw unreadable;
  const meta: ListMeta = { resourceVersion: String(revision) };
  if (nextKey !== undefined) {
    meta.continue = encodeContinue(nextKey, scope, revision);
    if (!sel.filter && remaining !== undefined && remaining > 0) meta.remainingItemCount = remaining;
  }
  return { items, meta };
}

/** An exact list the cache can no longer reconstruct, read from storage at that revision. */
async function listFromStorage(
  store: ResourceStore,
  scope: string,
  revision: number,
  startKey: string | undefined,
  limit: number,
  filter: ((e: CacheEntry) => boolean) | undefined,
  continuing: boolean,
): Promise<{ items: CacheEntry[]; nextKey?: string; remaining?: number }> {
  const items: CacheEntry[] = [];
  let key = startKey;
  const pageSize = limit > 0 ? Math.max(limit, 500) : 0;
  for (;;) {
    let res;
    try {
      res = await store.backend.list(scope, { revision, startKey: key, limit: pageSize || undefined });
    } catch (e) {
      if (e instanceof CompactedError) {
        if (continuing) {
          const err = errors.expired(
            'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
          );
          const tok = encodeContinue(startKey ?? scope, scope, -1);
          err.listMeta = { continue: tok };
          throw err;
        }
        throw errors.expired('The resourceVersion for the provided list is too old.');
      }
      throw e;
    }
    for (let i = 0; i < res.kvs.length; i++) {
      const kv = res.kvs[i]!;
      let obj: any;
      try {
        obj = store.decodeKV(kv);
      } catch (e) {
        if (e instanceof CorruptObjectError) throw store.listError([{ key: kv.key, error: e }]);
        throw e;
      }
      const rest = kv.key.slice(store.prefix.length);
      const slash = store.kind.namespaced ? rest.indexOf('/') : -1;
      const e = cacheEntry(kv.key, slash >= 0 ? rest.slice(0, slash) : '', slash >= 0 ? rest.slice(slash + 1) : rest, obj, kv.modRevision, kv.createRevision);
      if (filter && !filter(e)) continue;
      items.push(e);
      if (limit > 0 && items.length === limit) {
        const more = i < res.kvs.length - 1 || res.more;
        if (!more) return { items };
        return { items, nextKey: kv.key + '\x00', remaining: res.remaining + (res.kvs.length - 1 - i) };
      }
    }
    if (!res.more || res.kvs.length === 0) return { items };
    key = res.kvs[res.kvs.length - 1]!.key + '\x00';
  }
}

// ---- watch ----

export async function handleWatch(r: Request): Promise<void> {
  const { store, info, query } = r;
  let choice: OutputChoice;
  try {
    // YAML has no stream framing: 406 listing the stream media types, as in Kubernetes
    choice = negotiateWatch(r.req.headers.accept, { list: false, table: true, metadata: true, protobuf: protobufOf(r), cbor: r.ctx.cbor, metadataProtobuf: true });
  } catch (e) {
    if (e instanceof NotAcceptableError) throw errors.notAcceptable(e.message);
    throw e;
  }
  const name = info.name || undefined;
  const sel = selection(store.kind, query, name);
  const { timeoutSeconds } = listOptionNumbers(query);
  const rv = query.get('resourceVersion');
  const { sie, match } = watchOptions(query, r.ctx.watchList);
  const allowBookmarks = queryBool(query.get('allowWatchBookmarks'));

  // (a negative timeout ends the watch at once, as Go's timer of a negative duration fires at
  // once; one past what a timer holds is the longest a timer holds)
  let timeoutMs = Math.min(timeoutSeconds ?? 0, MAX_TIMER_SECONDS) * 1000;
  if (timeoutMs < 0) timeoutMs = 1;
  if (timeoutMs === 0) timeoutMs = Math.floor(r.ctx.minRequestTimeoutMs * (1 + Math.random()));

  const scope = store.scopePrefix(info.namespace);
  const table = choice.transform === 'Table' ? tableOptions(query) : undefined;
  const base = { store, prefix: scope, filter: sel.filter, allowBookmarks, timeoutMs, choice, table };
  if (sie) {
    // streaming list: the current state, then a bookmark marking its end (with the empty list
    // client-go builds its answer from, when bookmarks are allowed: isListWatchRequest)
    let error: StatusError | undefined;
    try {
      if (rv === null || rv === '') await waitConsistent(r);
      else if (rv !== '0') await waitFresh(store, parseRV(rv));
    } catch (e) {
      // a version the cache does not reach is an ERROR event of a watch that was answered 200
      if (!(e instanceof StatusError) || e.code !== 504) throw e;
      error = e;
    }
    r.ctx.watches.serve(r.req, r.res, {
      ...base,
      initialEvents: true,
      afterRevision: 0,
      initialEventsEndBookmark: allowBookmarks,
      listBlueprint: allowBookmarks ? emptyListBlueprint(store.kind, choice) : undefined,
      error,
    });
    return;
  }
  if (sie === false) {
    // no initial events: from the storage's current version (rv unset), the cache's ("0"), or the one named
    let after: number;
    if (rv === null || rv === '') after = await r.ctx.currentRevision();
    else if (rv === '0') after = store.cacher.revision();
    else after = parseRV(rv);
    r.ctx.watches.serve(r.req, r.res, { ...base, initialEvents: false, afterRevision: after, initialEventsEndBookmark: false });
    return;
  }
  if (rv === null || rv === '' || rv === '0') {
    if (rv === null || rv === '') await waitConsistent(r);
    r.ctx.watches.serve(r.req, r.res, { ...base, initialEvents: true, afterRevision: 0, initialEventsEndBookmark: false });
    return;
  }
  r.ctx.watches.serve(r.req, r.res, { ...base, initialEvents: false, afterRevision: parseRV(rv), initialEventsEndBookmark: false });
}

// ---- bodies ----

export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  return bodyNow(req, limit) ?? bodyLater(req, limit);
}

/** the body of a write: at once when it has all arrived (bodyNow), else read (bodyLater) */
function writeBody(req: IncomingMessage): Buffer | Promise<Buffer> {
  return bodyNow(req) ?? bodyLater(req, MAX_BODY_BYTES);
}

/**
 * The body when it has all arrived (HTTP/1.1, http1.ts: taken whole, without its events),
 * undefined when it is still to be read (readBody): the handlers of writes take it this way
 * first, without a turn of the microtask queue. Throws 413 for a body over the limit.
 */
export function bodyNow(req: IncomingMessage, limit = MAX_BODY_BYTES): Buffer | undefined {
  const len = req.headers['content-length'];
  if (len !== undefined && Number(len) > limit) {
    req.resume();
    throw errors.requestEntityTooLarge(`limit is ${limit}`);
  }
  const whole = (req as { takeBody?(): Buffer | undefined }).takeBody?.();
  if (whole !== undefined && whole.length > limit) throw errors.requestEntityTooLarge(`limit is ${limit}`);
  return whole;
}

function bodyLater(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        reject(errors.requestEntityTooLarge(`limit is ${limit}`));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (!failed) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.on('error', (e) => {
      if (!failed) reject(errors.badRequest(`error reading the request body: ${e.message}`));
    });
  });
}

const UNKNOWN_FORMAT =
  'the body of the request was in an unknown format - accepted media types include: ';

/** Decode a request body into an object of the endpoint's kind (or a given type). */
export function decodeBody(r: RequestBase, body: Buffer, kind: Pick<KindDecl, 'group' | 'version' | 'kind' | 'type'>): any {
  const ct = r.req.headers['content-type'];
  const apiVersion = kind.group ? `${kind.group}/${kind.version}` : kind.version;
  // a kind without a Protobuf form (a custom resource) takes no Protobuf body: 415, as in Kubernetes
  const protobuf = protobufFor(kind);
  const enc = inputEncoding(ct, { protobuf, cbor: r.ctx.cbor });
  if (!enc) throw errors.unsupportedMediaType(UNKNOWN_FORMAT + supportedInputTypes({ protobuf, cbor: r.ctx.cbor }).join(', '));
  let obj: any;
  switch (enc.encoding) {
    case 'json': {
      const text = body.toString('utf8');
      // (V8's JSON.parse takes any depth; what comes after it may not: see codec/depth.ts)
      try {
        obj = JSON.parse(text);
      } catch (e) {
        throw errors.badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
      }
      if (obj !== null && typeof obj === 'object' && r.query.get('fieldValidation') !== 'Ignore') {
        // a custom resource's unknown fields come from its schema's pruning (normalize)
        const custom = (kind as Partial<KindDecl>).custom !== undefined;
        const typeName = custom ? undefined : kind.type;
        const spans: VerbatimSpan[] = [];
        // the common body repeats no key: proven by counting (which also bounds the depth), and
        // the full scan left for a body whose normalization finds an unknown field (rescan)
        let list = NO_PROBLEMS;
        let rescan: StrictProblems['rescan'];
        // (the count's walk sees every number: an integer beyond 2^53 has the text parsed again, exactly)
        const numbers = { unsafe: false };
        if (jsonHasNoDuplicates(text, obj, spans, numbers)) {
          rescan = custom ? undefined : { text, typeName };
          if (numbers.unsafe) obj = parseJSONExact(text);
        } else {
          spans.length = 0;
          try {
            list = jsonStrictProblems(text, typeName, false, spans);
          } catch (e) {
            if (e instanceof BodyTooDeepError) throw errors.badRequest(e.message);
            throw e;
          }
          obj = exactJSON(text, obj);
        }
        strictProblems.set(obj, { list, warnings: list, complete: !custom, verbatim: spans.length ? { text, spans } : undefined, rescan, text });
      } else if (obj !== null && typeof obj === 'object') {
        if (jsonNestsDeeperThan(text)) throw errors.badRequest(tooDeepMessage(false));
        obj = exactJSON(text, obj);
        strictProblems.set(obj, { list: NO_PROBLEMS, warnings: NO_PROBLEMS, complete: true, text });
      }
      break;
    }
    case 'yaml': {
      const text = body.toString('utf8');
      if (yamlNestsDeeperThan(text)) throw errors.badRequest(tooDeepMessage(true));
      try {
        obj = parseFirstYAMLDocument(text);
      } catch (e) {
        throw errors.badRequest(`couldn't get version/kind; yaml parse error: ${(e as Error).message.split('\n')[0]}`);
      }
      if (obj !== null && typeof obj === 'object' && r.query.get('fieldValidation') !== 'Ignore') {
        const d = yamlDuplicateFields(text);
        if (d.length) strictProblems.set(obj, { list: [yamlStrictError(d)], warnings: d, complete: false });
      }
      break;
    }
    case 'protobuf': {
      let env;
      try {
        env = decodeEnvelope(body);
      } catch (e) {
        throw errors.badRequest(`provided input did not match any of the expected encodings: ${(e as Error).message}`);
      }
      if (env.kind && env.kind !== kind.kind) {
        throw errors.badRequest(`${env.kind} in version "${env.apiVersion}" cannot be handled as a ${kind.kind}: the kind in the data does not match the endpoint`);
      }
      if (env.apiVersion && env.apiVersion !== apiVersion) {
        throw errors.badRequest(`the API version in the data (${env.apiVersion}) does not match the expected API version (${apiVersion})`);
      }
      try {
        obj = decodeMessage(kind.type, env.raw);
      } catch (e) {
        throw errors.badRequest(`${kind.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}: ${(e as Error).message}`);
      }
      obj = { kind: kind.kind, apiVersion, ...obj };
      break;
    }
    case 'cbor': {
      let res;
      try {
        res = decodeCBORObject(kind.type, body);
      } catch (e) {
        if (e instanceof CBORDecodeError) throw errors.badRequest(cborDecodeStatusMessage(e, kind, body));
        throw e;
      }
      obj = res.obj;
      if (valueNestsDeeperThan(obj)) throw errors.badRequest(tooDeepMessage(false));
      if (obj !== null && typeof obj === 'object' && r.query.get('fieldValidation') !== 'Ignore' && res.strictErrors.length) {
        strictProblems.set(obj, { list: res.strictErrors, warnings: res.strictErrors, complete: true });
      }
      break;
    }
    default:
      throw errors.unsupportedMediaType(UNKNOWN_FORMAT + supportedInputTypes({ protobuf: true, cbor: r.ctx.cbor }).join(', '));
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    const what = obj === null ? 'null' : Array.isArray(obj) ? 'array' : typeof obj;
    throw errors.badRequest(`the object provided is unrecognized (must be of type ${kind.kind}): couldn't get version/kind; json parse error: cannot unmarshal ${what} into an object`);
  }
  if (obj.apiVersion === undefined || obj.apiVersion === '') obj.apiVersion = apiVersion;
  if (obj.kind === undefined || obj.kind === '') obj.kind = kind.kind;
  if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') {
    throw errors.badRequest(`the object provided is unrecognized (must be of type ${kind.kind}): kind and apiVersion must be strings`);
  }
  if (obj.apiVersion !== apiVersion) {
    throw errors.badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${apiVersion})`);
  }
  if (obj.kind !== kind.kind) {
    throw errors.badRequest(`${obj.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}: the kind in the data does not match the endpoint`);
  }
  if (obj.metadata !== undefined && (obj.metadata === null || typeof obj.metadata !== 'object' || Array.isArray(obj.metadata))) {
    if (obj.metadata === null) delete obj.metadata;
    else throw errors.badRequest(`${kind.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}: metadata must be an object`);
  }
  return obj;
}

type DryRun = boolean;

/** the options kind of a verb, for the messages of invalid query parameters */
function optionsKind(method: string | undefined): string {
  switch (method) {
    case 'PUT':
      return 'UpdateOptions';
    case 'PATCH':
      return 'PatchOptions';
    case 'DELETE':
      return 'DeleteOptions';
    default:
      return 'CreateOptions';
  }
}

/** the scheme Kubernetes' built-in types are registered in, as its errors name it */
const LEGACY_SCHEME = 'k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30';

/**
 * What Kubernetes' patch handler says of the apiVersion and kind of a JSON or merge patch's
 * result, which it decodes with the endpoint's codec (runtime.DecodeInto into the endpoint's
 * internal type): a missing or empty one takes the endpoint's; another group, version or kind
 * fails, as the scheme does not know it (no kind ... is registered) or cannot convert it into the
 * endpoint's type (unknown conversion). Undefined when they decode (another version of the same
 * kind converts in Kubernetes, and is left as it is here).
 */
export function patchedTypeMetaProblem(patched: unknown, kind: Pick<KindDecl, 'group' | 'version' | 'kind'>): string | undefined {
  if (patched === null || typeof patched !== 'object' || Array.isArray(patched)) return undefined;
  const o = patched as { apiVersion?: unknown; kind?: unknown };
  for (const f of ['apiVersion', 'kind'] as const) {
    const v = o[f];
    if (v !== undefined && v !== null && typeof v !== 'string') return `couldn't get version/kind; json parse error: json: cannot unmarshal ${goJSONKind(v)} into Go struct field .${f} of type string`;
  }
  const av = typeof o.apiVersion === 'string' ? o.apiVersion : '';
  const k = typeof o.kind === 'string' && o.kind !== '' ? o.kind : kind.kind;
  const ownAV = kind.group ? `${kind.group}/${kind.version}` : kind.version;
  const internalPkg = kind.group === '' ? 'core' : kind.group.split('.')[0]!;
  if (av === '') {
    // (the version defaults to the endpoint's internal one)
    if (k === kind.kind) return undefined;
    if (!BUILTIN_KINDS.some((d) => d.group === kind.group && d.kind === k)) return `no kind ${goQuote(k)} is registered for the internal version of group ${goQuote(kind.group)} in scheme ${goQuote(LEGACY_SCHEME)}`;
    return `unable to decode ${kind.group}/__internal, Kind=${k} into *${internalPkg}.${kind.kind}`;
  }
  if (av === ownAV && k === kind.kind) return undefined;
  const slash = av.indexOf('/');
  const group = slash < 0 ? '' : av.slice(0, slash);
  const version = slash < 0 ? av : av.slice(slash + 1);
  const known = BUILTIN_KINDS.find((d) => d.group === group && d.version === version && d.kind === k);
  if (!known) return `no kind ${goQuote(k)} is registered for version ${goQuote(av)} in scheme ${goQuote(LEGACY_SCHEME)}`;
  if (group === kind.group && k === kind.kind) return undefined;
  return `converting (${version}.${k}) to (${internalPkg}.${kind.kind}): unknown conversion`;
}

/**
 * dryRun: only "All". Kubernetes reports an invalid value as an Invalid <Verb>Options (422);
 * Keelson answers 400 Bad Request, as the project's issue asks, with Kubernetes' wording.
 */
export function dryRunOf(q: URLSearchParams, fromBody?: unknown, method?: string): DryRun {
  // (nearly every write has no dryRun: no arrays, no closures)
  if (fromBody === undefined && !q.has('dryRun')) return false;
  const all = [...q.getAll('dryRun')];
  if (Array.isArray(fromBody)) all.push(...fromBody.map(String));
  // `dryRun` with no value is accepted and means no dry run (the spec's parameter definition)
  if (all.some((v) => v !== 'All' && v !== '')) {
    // (the value is the []string Go prints with %#v)
    const values = new GoRepr(`[]string{${all.filter((v) => v !== '').map(goQuote).join(', ')}}`);
    const inv = errors.invalid({ group: 'meta.k8s.io', name: optionsKind(method) }, '', [notSupported('dryRun', values, ['All'])]);
    throw new StatusError(400, 'BadRequest', inv.message, inv.details);
  }
  return all.includes('All');
}

/** fieldValidation: Ignore, Warn (default), Strict; anything else is an Invalid <Verb>Options (422) */
export function fieldValidationOf(q: URLSearchParams, method?: string): 'Ignore' | 'Warn' | 'Strict' {
  const v = q.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Ignore' || v === 'Warn' || v === 'Strict') return v;
  throw errors.invalid({ group: 'meta.k8s.io', name: optionsKind(method) }, '', [field.notSupported('fieldValidation', v, ['', 'Ignore', 'Strict', 'Warn'])]);
}

/** the long string values of a decoded JSON body that can go into the stored JSON as they came (see codec/verbatim.ts) */
export function verbatimOf(decoded: unknown): Verbatim | undefined {
  if (decoded === null || typeof decoded !== 'object') return undefined;
  const v = strictProblems.get(decoded)?.verbatim;
  // (the last reader of a create's or an update's body)
  strictProblems.done(decoded);
  return v;
}

/**
 * Give a decoded body the form Kubernetes' types give it, and apply the fieldValidation level to
 * its unknown fields. A value of the wrong type is the first fatal error, at every level.
 */
export function normalizeBody(r: RequestBase, obj: any, kind: Pick<KindDecl, 'version' | 'kind' | 'type'>, level: 'Ignore' | 'Warn' | 'Strict', extraDuplicates?: string[]): any {
  const pre = obj !== null && typeof obj === 'object' ? strictProblems.get(obj) : undefined;
  const n = normalize(kind.type, obj, pre?.text);
  if (n.typeError) throw errors.badRequest(`${kind.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}: ${n.typeError}`);
  if (level !== 'Ignore') {
    // (the common case: nothing unknown, no duplicates)
    if (n.unknown.length === 0 && extraDuplicates === undefined && (pre === undefined || (pre.list.length === 0 && pre.warnings.length === 0))) return n.obj;
    if (pre?.rescan !== undefined && n.unknown.length > 0) {
      // the unknown fields as the scan finds them: in document order, with their messages
      const list = jsonStrictProblems(pre.rescan.text, pre.rescan.typeName);
      pre.list = list;
      pre.warnings = list;
      pre.rescan = undefined;
    }
    const unknown = n.unknown.map((f) => `unknown field "${f}"`);
    const problems = pre?.complete ? pre.list : [...(extraDuplicates ?? pre?.list ?? []), ...unknown];
    const warnings = pre?.complete ? pre.warnings : [...(extraDuplicates ?? pre?.warnings ?? []), ...unknown];
    if (problems.length) {
      if (level === 'Strict') {
        throw errors.badRequest(`${kind.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}: strict decoding error: ${problems.join(', ')}`);
      }
      for (const p of warnings) r.warnings.push(p);
    }
  }
  return n.obj;
}

// ---- create ----

export async function handleCreate(r: Request): Promise<void> {
  const { store, info, query } = r;
  if (!store.kind.verbs.includes('create')) throw methodNotAllowed();
  const choice = outputChoice(r, false);
  const dryRun = dryRunOf(query, undefined, r.req.method);
  const level = fieldValidationOf(query, r.req.method);
  const pending = writeBody(r.req);
  const body = pending instanceof Buffer ? pending : await pending;
  const decoded = decodeBody(r, body, store.kind);
  let obj = normalizeBody(r, decoded, store.kind, level);
  applyDefaults(store.kind.group, store.kind.version, store.kind.kind, obj);
  obj = trackUpdate(undefined, obj, store.kind.type, managerOf(r, '', store.kind));
  ensureRequestNamespace(store.kind, obj, info.namespace);
  rbacWriteCheck(r, obj, undefined);
  const created = await store.createWithEntry(obj, { dryRun, admission: admissionOf(r, {}, ''), verbatim: verbatimOf(decoded), refuseResourceVersion: true });
  writeEntry(r.res, 201, store.kind, created.obj, created.entry, choice);
}

// ---- update ----

export async function handleUpdate(r: Request): Promise<void> {
  const { store, info, query } = r;
  // a subresource with no update (eviction, binding, token) has no PUT route: 405 before the body
  // is read, as kube-apiserver's router answers
  if (info.subresource) {
    const sub = store.kind.subresources.find((x) => x.name === info.subresource);
    if (sub && !sub.verbs.includes('update')) {
      r.req.resume();
      throw methodNotAllowed();
    }
  }
  const choice = outputChoice(r, false);
  const dryRun = dryRunOf(query, undefined, r.req.method);
  const level = fieldValidationOf(query, r.req.method);
  const pending = writeBody(r.req);
  const body = pending instanceof Buffer ? pending : await pending;
  const who = managerOf(r, info.subresource, store.kind);
  const view = info.subresource ? subresourceView(store.kind, info.subresource) : undefined;
  if (view) {
    const v = normalizeBody(r, decodeBody(r, body, view.view), view.view, level);
    if (v.metadata?.name !== undefined && v.metadata.name !== '' && v.metadata.name !== info.name) {
      throw errors.badRequest(`the name of the object (${v.metadata.name}) does not match the name on the URL (${info.name})`);
    }
    const out = await store.guaranteedUpdate(info.namespace, info.name, (cur) => trackUpdate(cur, view.fromView(v, cur), store.kind.type, who), { dryRun, admission: admissionOf(r) });
    writeView(r.res, 200, view.toView(out), choice, view.view, choice.transform === 'Table' ? tableOptions(r.query) : undefined);
    return;
  }
  const decoded = decodeBody(r, body, store.kind);
  let obj = normalizeBody(r, decoded, store.kind, level);
  // a status write's body is the whole object, defaulted as any (a load balancer ingress IP gets its ipMode)
  if (!info.subresource || info.subresource === 'status') applyDefaults(store.kind.group, store.kind.version, store.kind.kind, obj);
  if (!info.subresource) obj = trackUpdate(store.get(info.namespace, info.name)?.obj, obj, store.kind.type, who);
  const m = obj.metadata;
  if (m.name !== info.name) {
    throw errors.badRequest(`the name of the object (${m.name ?? ''}) does not match the name on the URL (${info.name})`);
  }
  if (store.kind.namespaced && m.namespace && m.namespace !== info.namespace) {
    throw errors.badRequest(`the namespace of the object (${m.namespace}) does not match the namespace on the request (${info.namespace})`);
  }
  // a CSR's approval: the request's conditions replace the stored ones, nothing else changes
  const csrApproval = info.subresource === 'approval' && store.kind.group === 'certificates.k8s.io' && store.kind.kind === 'CertificateSigningRequest';
  if (info.subresource === 'status' || csrApproval) {
    if (!csrApproval && !store.kind.subresources.some((s) => s.name === 'status')) throw errors.notFoundPath();
    const out = await store.guaranteedUpdateWithEntry(
      info.namespace,
      info.name,
      (cur) => {
        const prev = structuredClone(cur);
        if (m.resourceVersion) cur.metadata.resourceVersion = m.resourceVersion;
        if (csrApproval) {
          // csrApprovalStrategy: the sent object's metadata, the stored spec, the stored status
          // with the sent conditions
          const next = structuredClone(obj);
          next.metadata.resourceVersion = m.resourceVersion || cur.metadata.resourceVersion;
          next.spec = cur.spec;
          next.status = { ...(cur.status ?? {}) };
          const conditions = csrConditionTimestamps(obj.status?.conditions, prev.status?.conditions);
          if (conditions === undefined) delete next.status.conditions;
          else next.status.conditions = conditions;
          return trackUpdate(prev, next, store.kind.type, who);
        }
        // the whole object sent; the store keeps of it what a status write may change
        const next = structuredClone(obj);
        if (m.resourceVersion) next.metadata.resourceVersion = m.resourceVersion;
        else next.metadata.resourceVersion = cur.metadata.resourceVersion;
        return trackUpdate(prev, next, store.kind.type, who);
      },
      { dryRun, main: false, subresource: info.subresource, admission: admissionOf(r) },
    );
    writeEntry(r.res, 200, store.kind, out.obj, out.entry, choice);
    return;
  }
  const podPart = store.kind.group === '' && store.kind.kind === 'Pod' ? POD_PARTS[info.subresource] : undefined;
  if (podPart) {
    // (the body is a Pod, defaulted as one: new ephemeral containers get their defaults, a new
    // limit without a request gives the request)
    applyDefaults(store.kind.group, store.kind.version, store.kind.kind, obj);
    const out = await store.guaranteedUpdateWithEntry(
      info.namespace,
      info.name,
      (cur) => {
        const next = podPart(obj, cur, false);
        if (m.resourceVersion) next.metadata.resourceVersion = m.resourceVersion;
        return trackUpdate(cur, next, store.kind.type, who);
      },
      { dryRun, main: false, subresource: info.subresource, admission: admissionOf(r) },
    );
    writeEntry(r.res, 200, store.kind, out.obj, out.entry, choice);
    return;
  }
  if (info.subresource === 'finalize' && store.kind.group === '' && store.kind.kind === 'Namespace') {
    // the namespace controller's way to remove its entry from spec.finalizers
    const out = await store.guaranteedUpdateWithEntry(
      info.namespace,
      info.name,
      (cur) => {
        // namespaceFinalizeStrategy: everything sent but the status (the metadata and the spec,
        // whose finalizers are the point), recorded for the writer's manager
        const next = structuredClone(obj);
        next.metadata.resourceVersion = m.resourceVersion || cur.metadata.resourceVersion;
        if (cur.status === undefined) delete next.status;
        else next.status = cur.status;
        return trackUpdate(cur, next, store.kind.type, who);
      },
      { dryRun, main: false, subresource: 'finalize', admission: admissionOf(r) },
    );
    writeEntry(r.res, 200, store.kind, out.obj, out.entry, choice);
    return;
  }
  if (info.subresource) throw errors.notFoundPath();
  const live = store.get(info.namespace, info.name)?.obj;
  if (!live && store.strategy.allowCreateOnUpdate) createOnWriteCheck(r);
  rbacWriteCheck(r, obj, live);
  const { obj: out, created, entry } = await store.update(info.namespace, info.name, obj, { dryRun, admission: admissionOf(r), verbatim: verbatimOf(decoded) });
  writeEntry(r.res, created ? 201 : 200, store.kind, out, entry, choice);
}

// ---- delete ----

interface DeleteOptionsBody {
  gracePeriodSeconds?: Int64;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
  orphanDependents?: boolean;
  dryRun?: string[];
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

const DELETE_OPTIONS_TYPE = 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions';

async function deleteOptions(r: Request): Promise<DeleteOptionsBody & { dry: boolean }> {
  const body = await readBody(r.req);
  let opts: DeleteOptionsBody = {};
  if (body.length > 0) {
    const ct = r.req.headers['content-type'];
    const enc = inputEncoding(ct, { protobuf: true, cbor: r.ctx.cbor });
    if (!enc) throw errors.unsupportedMediaType(UNKNOWN_FORMAT + supportedInputTypes({ protobuf: true, cbor: r.ctx.cbor }).join(', '));
    const text = enc.encoding === 'json' || enc.encoding === 'yaml' ? body.toString('utf8') : '';
    if (enc.encoding === 'json' ? jsonNestsDeeperThan(text) : enc.encoding === 'yaml' && yamlNestsDeeperThan(text)) throw errors.badRequest(tooDeepMessage(enc.encoding === 'yaml'));
    try {
      if (enc.encoding === 'protobuf') opts = decodeMessage(DELETE_OPTIONS_TYPE, decodeEnvelope(body).raw) as DeleteOptionsBody;
      else if (enc.encoding === 'cbor') opts = decodeCBORValue(body) as DeleteOptionsBody;
      else if (enc.encoding === 'yaml') opts = narrowBigInts(yaml().parse(text, { intAsBigInt: true })) ?? {};
      else opts = parseJSON(text);
    } catch (e) {
      throw errors.badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
    }
    if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) throw errors.badRequest('decoded object cannot be converted to DeleteOptions');
    const k = (opts as any).kind;
    if (k !== undefined && k !== 'DeleteOptions') throw errors.badRequest('decoded object cannot be converted to DeleteOptions');
    // the options must decode as DeleteOptions: a value of the wrong type deletes nothing
    const n = normalize(DELETE_OPTIONS_TYPE, opts);
    if (n.typeError) throw errors.badRequest(n.typeError);
  }
  // the options come from the body when there is one, else from the query (DeleteResource)
  const q = body.length > 0 ? new URLSearchParams() : r.query;
  const gp = q.get('gracePeriodSeconds');
  if (gp !== null && gp !== '') {
    if (!/^-?\d+$/.test(gp)) throw errors.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(gp)}: invalid syntax`);
    const g = BigInt(gp);
    if (!inInt64(g)) throw errors.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(gp)}: value out of range`);
    opts.gracePeriodSeconds = exactInteger(g);
  }
  const pp = q.get('propagationPolicy');
  if (pp !== null && pp !== '') opts.propagationPolicy = pp;
  const od = q.get('orphanDependents');
  if (od !== null) opts.orphanDependents = queryBool(od);
  const unsafe = q.get('ignoreStoreReadErrorWithClusterBreakingPotential');
  if (unsafe !== null) opts.ignoreStoreReadErrorWithClusterBreakingPotential = queryBool(unsafe);
  // without the gate AllowUnsafeMalformedObjectDeletion the option is dropped, as Kubernetes drops it
  if (!r.store.unsafeDeletion) delete opts.ignoreStoreReadErrorWithClusterBreakingPotential;
  // (ValidateDeleteOptions' order)
  const errs: FieldError[] = [];
  if (opts.propagationPolicy !== undefined && opts.orphanDependents !== undefined) {
    errs.push(field.invalid('propagationPolicy', opts.propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (opts.propagationPolicy !== undefined && !['Orphan', 'Background', 'Foreground'].includes(opts.propagationPolicy)) {
    errs.push(field.notSupported('propagationPolicy', opts.propagationPolicy, ['Foreground', 'Background', 'Orphan', 'nil']));
  }
  if (opts.ignoreStoreReadErrorWithClusterBreakingPotential === true) {
    // the unsafe delete takes no other option
    const path = 'ignoreStoreReadErrorWithClusterBreakingPotential';
    if (q.getAll('dryRun').length > 0 || (opts.dryRun?.length ?? 0) > 0) errs.push(field.invalid(path, true, 'cannot be set together with .dryRun'));
    if (opts.propagationPolicy !== undefined) errs.push(field.invalid(path, true, 'cannot be set together with .propagationPolicy'));
    if (opts.orphanDependents !== undefined) errs.push(field.invalid(path, true, 'cannot be set together with .orphanDependents'));
    if (opts.gracePeriodSeconds !== undefined) errs.push(field.invalid(path, true, 'cannot be set together with .gracePeriodSeconds'));
    if (opts.preconditions !== undefined && opts.preconditions !== null) errs.push(field.invalid(path, true, 'cannot be set together with .preconditions'));
  }
  if (opts.gracePeriodSeconds !== undefined && opts.gracePeriodSeconds < 0) opts.gracePeriodSeconds = 1;
  if (errs.length) throw errors.invalid({ group: 'meta.k8s.io', name: 'DeleteOptions' }, '', errs);
  const dry = dryRunOf(q, opts.dryRun, 'DELETE');
  return { ...opts, dry };
}

/** DeleteOptions as admission shows them (the body's fields and the query's) */
function deleteOptionsForAdmission(o: DeleteOptionsBody & { dry: boolean }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (o.gracePeriodSeconds !== undefined) out.gracePeriodSeconds = o.gracePeriodSeconds;
  if (o.preconditions) out.preconditions = o.preconditions;
  if (o.orphanDependents !== undefined) out.orphanDependents = o.orphanDependents;
  if (o.propagationPolicy !== undefined) out.propagationPolicy = o.propagationPolicy;
  if (o.dry) out.dryRun = ['All'];
  return out;
}

export async function handleDelete(r: Request): Promise<void> {
  const { store, info } = r;
  if (info.subresource) throw methodNotAllowed();
  if (!store.kind.verbs.includes('delete')) throw methodNotAllowed();
  const choice = outputChoice(r, false);
  const o = await deleteOptions(r);
  if (o.ignoreStoreReadErrorWithClusterBreakingPotential === true) {
    await unsafeDelete(r, choice);
    return;
  }
  const result = await store.delete(info.namespace, info.name, {
    dryRun: o.dry,
    admission: admissionOf(r, deleteOptionsForAdmission(o)),
    gracePeriodSeconds: o.gracePeriodSeconds,
    preconditions: o.preconditions,
    propagationPolicy: o.propagationPolicy,
    orphanDependents: o.orphanDependents,
  });
  const code = !result.removed && o.orphanDependents === false ? 202 : 200;
  if (store.strategy.returnDeletedObject || !result.removed) {
    writeEntry(r.res, code, store.kind, result.obj, undefined, choice);
    return;
  }
  const details: any = { name: result.obj.metadata.name };
  if (store.kind.group) details.group = store.kind.group;
  details.kind = store.kind.resource;
  details.uid = result.obj.metadata.uid;
  writeObject(r.res, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details }, choice.transform ? { ...choice, transform: '' } : choice, 'io.k8s.apimachinery.pkg.apis.meta.v1.Status');
}

/**
 * DELETE with ignoreStoreReadErrorWithClusterBreakingPotential=true (the gate is on and no other
 * option is set): the caller must also be allowed `unsafe-delete-ignore-read-errors` on the
 * object; the store refuses an object that reads. The answer is a Success Status naming the kind.
 */
async function unsafeDelete(r: Request, choice: OutputChoice): Promise<void> {
  const { store, info } = r;
  // the audit event tells that the request asked for it, allowed or not
  const audit = scopeOf(r.req)?.auditAnnotations;
  if (audit) audit['apiserver.k8s.io/unsafe-delete-ignore-read-error'] = '';
  const az = r.ctx.authorizer?.();
  if (az) {
    const err = authorizeUnsafeDelete(az, requestAttributes(r.user ?? ANONYMOUS, info, 'DELETE', r.query));
    if (err) throw err;
  }
  await store.unsafeDelete(info.namespace, info.name);
  const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: info.name, kind: store.kind.kind }, code: 200 };
  writeObject(r.res, 200, status, choice.transform ? { ...choice, transform: '' } : choice, 'io.k8s.apimachinery.pkg.apis.meta.v1.Status');
}

export async function handleDeleteCollection(r: Request): Promise<void> {
  const { store, query } = r;
  if (!store.kind.verbs.includes('deletecollection')) throw methodNotAllowed();
  const choice = outputChoice(r, true);
  const sel = selection(store.kind, query);
  const o = await deleteOptions(r);
  if (o.ignoreStoreReadErrorWithClusterBreakingPotential === true) {
    throw errors.invalid({ group: 'meta.k8s.io', name: 'DeleteOptions' }, '', [
      field.invalid('ignoreStoreReadErrorWithClusterBreakingPotential', true, 'is not allowed with DELETECOLLECTION, try again after removing the option'),
    ]);
  }
  // Kubernetes lists first, with the request's list options (checked as a list's; a limit deletes
  // one page), and an object that cannot be read fails the whole request
  // the answer is the list as it was read, whatever each delete made of its object (Kubernetes'
  // DeleteCollection returns the listed items)
  const { items, meta } = await readList(r, sel);
  for (const e of items) {
    try {
      await store.delete(e.namespace, e.name, {
        dryRun: o.dry,
        admission: admissionOf(r, deleteOptionsForAdmission(o), e.name),
        gracePeriodSeconds: o.gracePeriodSeconds,
        preconditions: o.preconditions,
        propagationPolicy: o.propagationPolicy,
        orphanDependents: o.orphanDependents,
      });
    } catch (err) {
      if (err instanceof StatusError && err.code === 404) continue;
      throw err;
    }
  }
  writeList(r.res, store.kind, items, meta, choice);
}

export function methodNotAllowed(): StatusError {
  return new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
}

/** Write an error as a Status in the representation the client asked for (JSON when in doubt). */
export function sendError(r: { req: IncomingMessage; res: ServerResponse }, err: unknown, cbor = false): void {
  const se = err instanceof StatusError ? err : errors.internal(err);
  const url = r.req.url ?? '';
  const q = url.indexOf('?');
  const pretty = prettyRequested(q >= 0 && url.includes('pretty') ? new URLSearchParams(url.slice(q + 1)).get('pretty') : null, r.req.headers['user-agent']);
  let choice: OutputChoice;
  try {
    // a Status in Protobuf only from an endpoint whose kind has a Protobuf form (else JSON, as Kubernetes does for custom resources)
    choice = negotiateOutput(r.req.headers.accept, { list: false, table: false, metadata: false, protobuf: protobufOf(r), cbor }, pretty);
  } catch {
    // nothing acceptable: indented JSON, as kube-apiserver writes a Status it cannot negotiate
    choice = { encoding: 'json', mediaType: 'application/json', transform: '', transformVersion: '', pretty: true };
  }
  writeStatusError(r.res, se, choice);
}

// ---- field managers (managedFields) ----

/** the field manager of a write: the fieldManager parameter, else derived from the User-Agent */
function managerOf(r: RequestBase, subresource: string, kind: Pick<KindDecl, 'group' | 'version' | 'kind' | 'subresources'>): ManagerInfo {
  const param = r.query.get('fieldManager') ?? '';
  const errs = validateFieldManager(param, 'fieldManager');
  // (an Invalid CreateOptions, UpdateOptions or PatchOptions, as the verb's options are)
  if (errs.length) throw errors.invalid({ group: 'meta.k8s.io', name: optionsKind(r.req.method) }, '', errs);
  return {
    manager: managerOrUserAgent(param, r.req.headers['user-agent'] ?? ''),
    apiVersion: kind.group ? `${kind.group}/${kind.version}` : kind.version,
    subresource,
    resetFields: resetFieldsFor(subresource, kind.subresources.some((s) => s.name === 'status'), kind),
  };
}

// ---- patch ----

const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];

/** PATCH: JSON patch, merge patch, strategic merge patch, or server-side apply */
export async function handlePatch(r: Request): Promise<void> {
  const { store, info, query } = r;
  const kind = store.kind;
  // a subresource with no patch (eviction, binding, token, finalize) has no PATCH route: 405
  // before the body or the options are looked at, as kube-apiserver's router answers
  if (info.subresource) {
    const sub = kind.subresources.find((x) => x.name === info.subresource);
    if (sub && !sub.verbs.includes('patch')) {
      r.req.resume();
      throw methodNotAllowed();
    }
  }
  let ct = (r.req.headers['content-type'] ?? '').trim();
  const semi = ct.indexOf(';');
  if (semi > 0) ct = ct.slice(0, semi).trim();
  ct = ct.toLowerCase();
  const patchTypes = r.ctx.cbor ? [...PATCH_TYPES, APPLY_PATCH_CBOR_MEDIA_TYPE] : PATCH_TYPES;
  if (!patchTypes.includes(ct)) {
    r.req.resume();
    throw errors.unsupportedMediaType(UNKNOWN_FORMAT + patchTypes.join(', '));
  }
  const applyCBOR = ct === APPLY_PATCH_CBOR_MEDIA_TYPE;
  const isApply = ct === 'application/apply-patch+yaml' || applyCBOR;
  const choice = outputChoice(r, false);
  const body = await readBody(r.req);
  // PatchOptions
  const optErrs: FieldError[] = [];
  const fm = query.get('fieldManager') ?? '';
  if (isApply && fm === '') optErrs.push(field.required('fieldManager', 'is required for apply patch'));
  if (!isApply && query.has('force')) optErrs.push(field.forbidden('force', 'may not be specified for non-apply patch'));
  optErrs.push(...validateFieldManager(fm, 'fieldManager'));
  if (optErrs.length) throw errors.invalid({ group: 'meta.k8s.io', name: 'PatchOptions' }, '', optErrs);
  const dryRun = dryRunOf(query, undefined, r.req.method);
  const level = fieldValidationOf(query, r.req.method);
  const force = queryBool(query.get('force'));

  const sub = info.subresource;
  const view = sub ? subresourceView(kind, sub) : undefined;
  const csrApproval = sub === 'approval' && kind.group === 'certificates.k8s.io' && kind.kind === 'CertificateSigningRequest';
  const podPart = kind.group === '' && kind.kind === 'Pod' ? POD_PARTS[sub] : undefined;
  if (sub && sub !== 'status' && !csrApproval && !view && !podPart) throw methodNotAllowed();
  const who = managerOf(r, sub, kind);

  let patch: unknown;
  const text = body.toString('utf8');
  // (an apply body is read as YAML, whatever it holds; the other patch bodies go to the Go-style
  // syntax check, which recurses, before they are parsed)
  if (isApply ? !applyCBOR && yamlNestsDeeperThan(text) : jsonNestsDeeperThan(text)) throw errors.badRequest(tooDeepMessage(isApply));
  const typeOfView = view ? view.view : kind;
  /** problems of the patch document (duplicates, unknown fields) in document order */
  let patchProblems: string[] = [];
  if (isApply) {
    if (applyCBOR) {
      try {
        patch = decodeApplyPatchCBOR(body);
      } catch (e) {
        if (e instanceof CBORDecodeError) throw errors.badRequest(`error decoding patch: ${e.message}`);
        throw e;
      }
      if (valueNestsDeeperThan(patch)) throw errors.badRequest(tooDeepMessage(false));
    } else
      try {
        patch = parseFirstYAMLDocument(text);
      } catch (e) {
        throw errors.badRequest(`error decoding YAML: ${(e as Error).message.split('\n')[0]}`);
      }
    if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
      const what = patch === null ? 'null' : Array.isArray(patch) ? 'array' : typeof patch === 'string' ? 'string' : typeof patch;
      throw errors.badRequest(`error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${what} into Go value of type map[string]interface {}`);
    }
    if (level !== 'Ignore' && !applyCBOR) {
      const dups = yamlDuplicateFields(text);
      if (dups.length && level === 'Strict') {
        throw errors.badRequest(`error strict decoding YAML: error converting YAML to JSON: ${yamlStrictError(dups)}`);
      }
      for (const d of dups) r.warnings.push(d);
    }
    // the applied configuration is exactly what was sent: a field the type (or a custom
    // resource's structural schema) lacks fails the apply ("failed to create typed patch object
    // ...: .x: field not declared in schema"), whatever the field validation, as Kubernetes' field
    // manager fails it before any strict check
  } else {
    const syntax = goJSONSyntaxError(body);
    if (syntax !== null) {
      // Kubernetes: the strategic merge patch path reports the decoder's error as it is
      throw errors.badRequest(ct === 'application/strategic-merge-patch+json' ? syntax : `error decoding patch: ${syntax}`);
    }
    patch = parseJSON(text);
    if (level !== 'Ignore') {
      patchProblems =
        ct === 'application/json-patch+json' ? jsonPatchStrictProblems(text) : jsonStrictProblems(text, typeOfView.type, ct === 'application/strategic-merge-patch+json');
    }
  }

  /**
   * a problem of the patched object: 422 Invalid on the field "patch", carrying the patched JSON,
   * or for a strategic merge patch the patch as Go prints its map (`%+v`: map[spec:map[replicas:x]]),
   * as Kubernetes' handlers do
   */
  // the literals with a fraction or an exponent that the patch writes (`3.0`): Go's decoding of the patched object sees them
  const literals = isApply ? null : ct === 'application/merge-patch+json' ? mergePatchLiterals(text) : ct === 'application/json-patch+json' ? jsonPatchLiterals(text, patch) : null;
  const patchInvalid = (patched: unknown, msg: string) =>
    errors.invalid({ group: '', name: '' }, '', [
      field.invalid('patch', ct === 'application/strategic-merge-patch+json' ? sprintf('%+v', toUnstructuredValues(patch)) : withLiterals(patched, literals, stringifyJSON), msg),
    ]);

  // the view a patch applies to (the object, or its Scale), and back
  const apply1 = (cur: any): any => {
    const base = view ? view.toView(cur) : cur;
    // an apply to a Scale sees the parent's managers of replicas as the Scale's (ScaleHandler)
    if (view && isApply) base.metadata.managedFields = scaleManagedFields(cur.metadata.managedFields);
    let patched: any;
    try {
      if (isApply) {
        // (a Scale is applied as autoscaling/v1)
        const objectAPIVersion = view ? `${view.view.group}/${view.view.version}` : undefined;
        patched = ssaApply(base, patch, typeOfView.type, { ...who, subresource: sub, force, kind: typeOfView.kind, objectAPIVersion });
        if (patched === base) return cur; // nothing changes
      } else if (ct === 'application/json-patch+json') {
        patched = applyJSONPatch(base, patch, { fieldValidation: level });
      } else if (ct === 'application/merge-patch+json') {
        patched = applyMergePatch(base, patch, { fieldValidation: level });
      } else {
        patched = applyStrategicMergePatch(base, patch, typeOfView.type, { fieldValidation: level });
      }
    } catch (e) {
      // a patch document the algorithms fail on is the client's error, never a 500 (see asRequestError)
      throw asRequestError(e);
    }
    // the patched object as Kubernetes decodes it: its apiVersion and kind, its types, then the strict problems
    if (!isApply && !view && !kind.custom && ct !== 'application/strategic-merge-patch+json') {
      const tm = patchedTypeMetaProblem(patched, kind);
      if (tm !== undefined) throw patchInvalid(patched, tm);
    }
    // (a strategic merge patch's result reaches the Go type through the unstructured converter, whose words its type errors take)
    const n = normalize(typeOfView.type, patched, literals, ct === 'application/strategic-merge-patch+json');
    if (n.typeError) throw patchInvalid(patched, n.typeError);
    if (!isApply && level !== 'Ignore') {
      const problems = [...patchProblems];
      if (ct === 'application/json-patch+json' || (!view && kind.custom)) for (const f of n.unknown) problems.push(`unknown field "${f}"`);
      if (problems.length) {
        if (level === 'Strict') throw patchInvalid(patched, `strict decoding error: ${problems.join(', ')}`);
        for (const p of problems) r.warnings.push(p);
      }
      patchProblems = []; // reported once, not again on a retry
    }
    let next = n.obj;
    if (!view && !kind.custom && (next.apiVersion !== store.apiVersion || next.kind !== kind.kind)) {
      // the object is the endpoint's kind in its version whatever the patch did to its type meta
      // (one the decoding took: missing, empty, or a strategic merge patch's, which Kubernetes
      // decodes into the typed object and drops)
      const { apiVersion: _a, kind: _k, ...rest } = next;
      next = { kind: kind.kind, apiVersion: store.apiVersion, ...rest };
    }
    if (!view) {
      if (next.metadata?.name !== cur.metadata.name) {
        throw errors.badRequest(`the name of the object (${next.metadata?.name ?? ''}) does not match the name on the URL (${info.name})`);
      }
      if ((next.metadata?.uid ?? '') !== '' && next.metadata.uid !== cur.metadata.uid) {
        throw errors.invalid(store.groupKind, info.name, [field.invalid('metadata.uid', next.metadata.uid, 'field is immutable')]);
      }
    } else if ((next.metadata?.name ?? '') !== info.name) {
      // a patched view (a Scale) is checked as every patched object is (the patcher's checkName)
      throw errors.badRequest(`the name of the object (${next.metadata?.name ?? ''}) does not match the name on the URL (${info.name})`);
    }
    if (!view && (!sub || sub === 'status' || podPart)) applyDefaults(kind.group, kind.version, kind.kind, next);
    // ephemeralcontainers changes the ephemeral containers only, resize the containers' resources
    if (podPart) next = podPart(next, cur, isApply);
    if (csrApproval) {
      // the approval subresource changes the metadata and the conditions only (csrApprovalStrategy)
      const conditions = csrConditionTimestamps(next.status?.conditions, cur.status?.conditions);
      next.spec = structuredClone(cur.spec);
      next.status = { ...structuredClone(cur.status ?? {}) };
      if (conditions === undefined) delete next.status.conditions;
      else next.status.conditions = conditions;
    }
    if (view) {
      next = view.fromView(next, cur);
      // the Scale's managers mapped back onto the parent's
      if (isApply) {
        next.metadata = { ...next.metadata };
        const mf = parentManagedFields(cur.metadata.managedFields, patched.metadata?.managedFields, store.apiVersion);
        if (mf) next.metadata.managedFields = mf;
        else delete next.metadata.managedFields;
      }
    }
    if (!isApply) next = trackUpdate(cur, next, kind.type, { ...who, subresource: sub });
    if (!sub) rbacWriteCheck(r, next, cur);
    return next;
  };

  // An apply creates the object when it is absent and updates it when it is there; when another
  // writer creates or deletes it in between, the apply goes the other way, as Kubernetes'
  // create-or-update does (an apply never answers 409 AlreadyExists, nor 404 for a deleted object)
  // (a name that cannot be a key is a 400 first, as the store's Update finds it)
  store.requestKey(info.namespace, info.name);
  for (let attempt = 1; ; attempt++) {
    const existing = store.get(info.namespace, info.name);
    if (!existing) {
      // an object that cannot be read back is neither patched nor created anew
      const unreadable = store.readError(store.key(info.namespace, info.name));
      if (unreadable) throw unreadable;
      if (!isApply || sub) throw errors.notFound(store.groupResource, info.name);
      // apply creates the object
      let obj: any;
      try {
        obj = ssaApply(undefined, patch, kind.type, { ...who, force, kind: kind.kind });
      } catch (e) {
        throw asRequestError(e);
      }
      obj = normalizeBody(r, obj, kind, 'Ignore');
      applyDefaults(kind.group, kind.version, kind.kind, obj);
      obj.metadata ??= {};
      if (obj.metadata.name === undefined || obj.metadata.name === '') obj.metadata.name = info.name;
      ensureRequestNamespace(kind, obj, info.namespace);
      if (obj.metadata.name !== info.name) throw errors.badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${info.name})`);
      createOnWriteCheck(r);
      rbacWriteCheck(r, obj, undefined);
      try {
        const created = await store.createWithEntry(obj, { dryRun, admission: admissionOf(r) });
        writeEntry(r.res, 201, kind, created.obj, created.entry, choice);
        return;
      } catch (e) {
        // another writer created the object since the look-up: the configuration is applied to
        // that object, as Kubernetes' create-or-update does (never 409 AlreadyExists for an apply)
        // (the store answers AlreadyExists once its cache holds the other writer's object)
        if (!(e instanceof StatusError && e.reason === 'AlreadyExists') || attempt >= APPLY_RACE_ATTEMPTS) throw e;
        continue;
      }
    }
    let out: { obj: any; entry?: CacheEntry };
    try {
      out = await store.guaranteedUpdateWithEntry(info.namespace, info.name, apply1, { dryRun, main: !sub || !!view, subresource: view ? undefined : sub, admission: admissionOf(r) });
    } catch (e) {
      // (the store answers NotFound once its cache holds the deletion)
      if (isApply && !sub && e instanceof StatusError && e.reason === 'NotFound' && attempt < APPLY_RACE_ATTEMPTS && !store.readError(store.key(info.namespace, info.name))) continue;
      throw e;
    }
    if (view) {
      writeView(r.res, 200, view.toView(out.obj), choice, view.view, choice.transform === 'Table' ? tableOptions(r.query) : undefined);
      return;
    }
    writeEntry(r.res, 200, kind, out.obj, out.entry, choice);
    return;
  }
}

/** how many times an apply goes back and forth between creating and updating an object others create and delete meanwhile */
const APPLY_RACE_ATTEMPTS = 20;

/**
 * A CSR's new conditions with their timestamps filled as Kubernetes does: lastUpdateTime now when
 * unset; lastTransitionTime kept from the stored condition of the same type and status, else now.
 */
function csrConditionTimestamps(conditions: unknown, old: unknown): unknown {
  if (!Array.isArray(conditions)) return conditions;
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const before = Array.isArray(old) ? old : [];
  return conditions.map((c) => {
    if (c === null || typeof c !== 'object') return c;
    const out = { ...c };
    if (!out.lastUpdateTime) out.lastUpdateTime = now;
    if (!out.lastTransitionTime) {
      const was = before.find((o) => o?.type === out.type);
      out.lastTransitionTime = was && was.status === out.status && was.lastTransitionTime ? was.lastTransitionTime : now;
    }
    return out;
  });
}
