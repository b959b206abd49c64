// The generic store: one per served resource. It turns API operations (create, update, delete,
// get, list, watch) into storage operations, keeps server-owned metadata (uid, resourceVersion,
// creationTimestamp, generation, deletion state), and serves reads from the watch cache. It
// knows no kind by name: a kind's special behaviour comes from its Strategy.
import { type Int64 } from '../../codec/int64.js';
import { parseJSON, stringifyJSON } from '../../codec/int64.js';
import { randomInt } from 'node:crypto';
import { addGoSeconds, rfc3339 } from '../../machinery/time.js';
import { newUUID } from '../../machinery/uuid.js';
import { inObjectMetaOrder } from '../../machinery/objectmeta.js';
import { goJSONSyntaxError } from '../../schema/validation/gojson.js';
import { GoRepr, invalid as kInvalid } from '../../schema/validation/errs.js';
import { goQuote } from '../../machinery/gostrings.js';
import { fillPlaceholder, FRAGMENT_PLACEHOLDER, RV_PLACEHOLDER, splitPlaceholder, type PlaceholderText } from '../../codec/resourceversion.js';
import { managedFieldsText } from '../../patch/ssa/fieldmanager.js';
import { stringifyWithVerbatim, type Verbatim } from '../../codec/verbatim.js';
import { errors, field, qualified, StatusError, type FieldError, type GroupThing, type StatusCause, type StatusDetails } from '../../machinery/errors.js';
import { fieldValue, selectableField } from '../../machinery/selectors.js';
import { validateAnnotations, validateLabels, validateName } from '../../machinery/validation.js';
import type { KindDecl } from '../../schema/model.js';
import { atRevision, newCacher, type Cacher, type CacheEntry } from '../../storage/cacher.js';
import { ConflictError, KeyExistsError, KeyNotFoundError, type Backend, type KeyValue } from '../../storage/interface.js';
import type { Strategy } from './strategy.js';
import type { AdmissionChain } from '../admission/chain.js';
import type { Operation } from '../admission/types.js';
import { admissionAttributesOf, type RequestAdmission } from '../admission/wiring.js';
import type { Transformer } from '../../storage/value/transformer.js';

export interface WriteOptions {
  dryRun: boolean;
  /** the request's long string values that can go into the stored JSON as they came (codec/verbatim.ts) */
  verbatim?: Verbatim;
  /** the admission chain a user's write passes (absent for the server's own writes) */
  admission?: WriteAdmission;
  /** a create (POST) refuses an object that names a resourceVersion, as Kubernetes' storage does */
  refuseResourceVersion?: boolean;
}

/** a request's admission: the chain and what the request says (the store adds object, old object, operation) */
export interface WriteAdmission {
  chain: AdmissionChain;
  request: Omit<RequestAdmission, 'operation' | 'object' | 'oldObject' | 'dryRun'>;
  /**
   * the request's deadline: checked once the validating phase is over (the last step before the
   * write reaches storage), so that a request already answered with 504 does not write
   */
  deadline?: { check(): void };
  /** the options as the operation's kind, made on the first phase and shared by the next (the store's) */
  optionsFor?: { operation: Operation; options: unknown };
}

export interface DeleteOptions extends WriteOptions {
  gracePeriodSeconds?: Int64;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
  orphanDependents?: boolean;
}

/**
 * A stored value that cannot be read back: the configured encryption does not decrypt it
 * (`transform`), or its bytes do not decode into an object (`decode`). Kubernetes calls such an
 * object corrupt; only an unsafe delete removes it.
 */
export class CorruptObjectError extends Error {
  constructor(
    readonly key: string,
    /** 'convert': a CRD's conversion webhook could not give the object in this version (not a corruption: the webhook may come back) */
    readonly stage: 'transform' | 'decode' | 'convert',
    /** the transformer's or the decoder's own message */
    readonly detail: string,
    /** the revision Kubernetes names in the message (0 for a transformation failure) */
    readonly revision: number,
  ) {
    super(`${stage === 'transform' ? 'data from the storage is not transformable' : 'object not decodable'} revision=${revision}: ${detail}`);
    this.name = 'CorruptObjectError';
  }
}

/**
 * The stored value a CRD version's storage passes on for an object its conversion webhook could
 * not convert (crd/convertingbackend.ts): a NUL byte, which no stored value starts with, then the
 * webhook's error; the store reads it as an object that cannot be read, with that error.
 */
export function conversionFailedValue(message: string): Uint8Array {
  return Buffer.concat([Buffer.from([0]), Buffer.from(message, 'utf8')]);
}

/** Kubernetes' limit on the corrupt objects a list error names */
const MAX_CORRUPT_CAUSES = 100;
/** what the identity provider says of encrypted bytes (Kubernetes' encrypt-check transformer) */
const ENCRYPTED_PREFIX = 'k8s:enc:';

export interface DeleteResult {
  /** the object as it was removed, or as it now is (terminating) */
  obj: any;
  /** removed from storage (false: only marked for deletion) */
  removed: boolean;
}

/** Admission-like checks that need other resources (namespace lifecycle), given by the server. */
export interface StoreHooks {
  /** called before a namespaced object is created: throws when its namespace refuses it */
  checkNamespace?(namespace: string, resource: GroupThing, name: string): void;
}

const OPTIONS_KIND: Record<Operation, string> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions', CONNECT: '' };

const GENERATE_CHARS = 'bcdfghjklmnpqrstvwxz2456789';
/** metadata a client may not set on a create: removed before the server sets its own */
const SERVER_SET_ON_CREATE = ['uid', 'resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink'];
const MAX_GENERATE_ATTEMPTS = 8;

function asCorrupt(key: string, err: Error): CorruptObjectError {
  return err instanceof CorruptObjectError ? err : new CorruptObjectError(key, 'decode', err.message, 0);
}

/** Kubernetes' StorageError of a corrupt object (code 7) */
function corruptStorageError(key: string, e: CorruptObjectError): string {
  return `StorageError: corrupt object, Code: 7, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: ${e.message}`;
}

/** an object this process is writing: its stored bytes, the object, its answer's JSON, and (once committed) its cache entry */
interface PendingWrite {
  bytes: Uint8Array;
  obj: any;
  answer?: PlaceholderText;
  entry: CacheEntry | undefined;
}

export class ResourceStore {
  readonly prefix: string;
  readonly groupResource: GroupThing;
  readonly groupKind: GroupThing;
  readonly apiVersion: string;
  readonly cacher: Cacher;
  /** objects written by this process, handed to the cache without re-parsing their bytes */
  private readonly pending = new Map<string, PendingWrite>();
  /** the write decode() last took from `pending`, until the cache has made its entry (jsonOf, then madeEntry) */
  private lastPending?: PendingWrite;
  /** encryption at rest of this resource (--encryption-provider-config); none: bytes stored as they are */
  private transformer: Transformer | undefined;
  /** feature gate AllowUnsafeMalformedObjectDeletion: corrupt objects named in errors, the unsafe delete */
  readonly unsafeDeletion: boolean;
  /** --enable-garbage-collector: deletes leave the orphan and foregroundDeletion finalizers for a garbage collector */
  readonly garbageCollection: boolean;

  constructor(
    readonly kind: KindDecl,
    readonly strategy: Strategy,
    readonly backend: Backend,
    readonly hooks: StoreHooks = {},
    cacheOpts: { historyWindowMs?: number; transformer?: Transformer; allowUnsafeMalformedObjectDeletion?: boolean; garbageCollection?: boolean } = {},
  ) {
    this.transformer = cacheOpts.transformer;
    this.garbageCollection = cacheOpts.garbageCollection !== false;
    this.unsafeDeletion = cacheOpts.allowUnsafeMalformedObjectDeletion === true;
    this.prefix = `/registry/${kind.storagePrefix}/`;
    this.groupResource = { group: kind.group, name: kind.resource };
    this.groupKind = { group: kind.group, name: kind.kind };
    this.apiVersion = kind.group ? `${kind.group}/${kind.version}` : kind.version;
    const prefixLen = this.prefix.length;
    const namespaced = kind.namespaced;
    this.cacher = newCacher(backend, this.prefix, {
      decode: (kv) => this.decode(kv),
      json: (kv, obj) => this.jsonOf(kv, obj),
      made: (entry) => this.madeEntry(entry),
      fields: selectableFieldsOf(kind),
      load: { plain: (kv) => this.plainOf(kv), fromPlain: (plain, kv) => this.fromPlain(plain, kv) },
      split: (key, obj) => {
        const m = obj?.metadata;
        if (m !== null && typeof m === 'object' && typeof m.name === 'string') {
          const name: string = m.name;
          const ns = namespaced ? m.namespace : '';
          if (
            typeof ns === 'string' &&
            key.length === prefixLen + (namespaced ? ns.length + 1 : 0) + name.length &&
            key.endsWith(name) &&
            (!namespaced || (key.charCodeAt(prefixLen + ns.length) === 0x2f && key.startsWith(ns, prefixLen)))
          ) {
            return { namespace: ns, name };
          }
        }
        const rest = key.slice(prefixLen);
        if (!namespaced) return { namespace: '', name: rest };
        const slash = rest.indexOf('/');
        return { namespace: rest.slice(0, slash), name: rest.slice(slash + 1) };
      },
      tombstone: (namespace, name, revision) => this.tombstone(namespace, name, revision),
      historyWindowMs: cacheOpts.historyWindowMs,
    });
  }

  /**
   * Change the encryption of this resource (an automatic reload of the configuration). Values
   * already stored keep their form until rewritten; when some could not be read, the cache is
   * loaded again, so that a key given back makes them readable.
   */
  setTransformer(t: Transformer | undefined): void {
    if (t === this.transformer) return;
    this.transformer = t;
    if (this.cacher.corruptIn(this.prefix).length > 0) this.cacher.resync(new Error('the encryption configuration changed'));
  }

  /** the object of a watch event about an object that could not be read: kind, name, namespace */
  private tombstone(namespace: string, name: string, revision: number): any {
    const metadata: any = { name };
    if (namespace) metadata.namespace = namespace;
    metadata.resourceVersion = String(revision);
    return { kind: this.kind.kind, apiVersion: this.apiVersion, metadata };
  }

  start(): Promise<void> {
    return this.cacher.start();
  }

  stop(): void {
    this.cacher.stop();
  }

  key(namespace: string, name: string): string {
    return this.kind.namespaced ? `${this.prefix}${namespace}/${name}` : `${this.prefix}${name}`;
  }

  /**
   * The key of a name a request gives (its path, or a created object's metadata.name), as
   * Kubernetes' NamespaceKeyFunc and NoNamespaceKeyFunc make it: a name that cannot be one
   * segment of a path ('.', '..', or holding '/' or '%') is a 400 before storage is read.
   */
  requestKey(namespace: string, name: string): string {
    const problems = pathSegmentNameProblems(name);
    if (problems.length) throw errors.badRequest(`Name parameter invalid: ${goQuote(name)}: ${problems.join(';')}`);
    return this.key(namespace, name);
  }

  /** the key prefix of one namespace, or of the whole resource */
  scopePrefix(namespace: string): string {
    return this.kind.namespaced && namespace ? `${this.prefix}${namespace}/` : this.prefix;
  }

  private decode(kv: KeyValue): any {
    const p = this.pending.get(kv.key);
    if (p && p.bytes === kv.value) {
      this.pending.delete(kv.key);
      p.obj.metadata.resourceVersion = String(kv.modRevision);
      this.lastPending = p;
      return p.obj;
    }
    return this.decodeKV(kv);
  }

  /** the cache's entry of an object this process just wrote: kept with the write, for createStored */
  private madeEntry(entry: CacheEntry): void {
    const p = this.lastPending;
    if (p === undefined) return;
    this.lastPending = undefined;
    if (p.obj === entry.obj) p.entry = entry;
  }

  /** the answer's JSON of an object this process just wrote: its stored JSON with the resourceVersion added */
  private jsonOf(kv: KeyValue, obj: any): Uint8Array | undefined {
    // (the cache asks for the entry's JSON just before it makes the entry: madeEntry lets the write go)
    const p = this.lastPending;
    if (!p || p.obj !== obj || !p.answer) return undefined;
    return fillPlaceholder(p.answer, String(kv.modRevision));
  }

  /** an object from its stored bytes, in this resource's form, resourceVersion set; CorruptObjectError when unreadable */
  decodeKV(kv: KeyValue): any {
    return this.fromPlain(this.plainOf(kv), kv);
  }

  /** a stored value in plain text: decrypted when this resource is encrypted; CorruptObjectError when it cannot be */
  private plainOf(kv: KeyValue): Uint8Array {
    if (!this.transformer) return kv.value;
    try {
      return this.transformer.fromStorage(kv.value, Buffer.from(kv.key)).data;
    } catch (e) {
      throw new CorruptObjectError(kv.key, 'transform', e instanceof Error ? e.message : String(e), 0);
    }
  }

  /** the object of a stored value in plain text (decodeKV's second half) */
  private fromPlain(value: Uint8Array, kv: KeyValue): any {
    if (value[0] === 0) throw new CorruptObjectError(kv.key, 'convert', Buffer.from(value.buffer, value.byteOffset + 1, value.byteLength - 1).toString('utf8'), kv.modRevision);
    let obj: any;
    try {
      obj = parseJSON(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8'));
    } catch (e) {
      // a resource no rule encrypts reads its values as Kubernetes' identity provider does
      if (!this.transformer && Buffer.from(value.buffer, value.byteOffset, Math.min(value.byteLength, ENCRYPTED_PREFIX.length)).toString('latin1') === ENCRYPTED_PREFIX) {
        throw new CorruptObjectError(kv.key, 'transform', 'identity transformer tried to read encrypted data', 0);
      }
      throw new CorruptObjectError(kv.key, 'decode', `couldn't get version/kind; json parse error: ${goJSONSyntaxError(value) ?? (e as Error).message}`, kv.modRevision);
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
      throw new CorruptObjectError(kv.key, 'decode', `couldn't get version/kind; json parse error: json: cannot unmarshal ${obj === null ? 'null' : Array.isArray(obj) ? 'array' : typeof obj} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`, kv.modRevision);
    }
    try {
      if (this.strategy.storageForm) obj = this.strategy.storageForm.fromStorage(obj);
    } catch (e) {
      throw new CorruptObjectError(kv.key, 'decode', e instanceof Error ? e.message : String(e), kv.modRevision);
    }
    // (stored without a resourceVersion: the member goes in its place, not after the others)
    obj.metadata = obj.metadata && typeof obj.metadata === 'object' ? inObjectMetaOrder(obj.metadata) : {};
    obj.metadata.resourceVersion = String(kv.modRevision);
    return obj;
  }

  /**
   * The stored value (at this revision) is in a form the encryption no longer writes (an older
   * key or provider): an update that changes nothing still rewrites it, as Kubernetes does, so
   * that `kubectl replace` of every object moves them to the new key. Resources without
   * encryption never ask storage.
   */
  private async isStale(key: string, revision: number): Promise<boolean> {
    if (!this.transformer) return false;
    const kv = await this.backend.get(key);
    if (!kv || kv.modRevision !== revision) return false;
    try {
      return this.transformer.fromStorage(kv.value, Buffer.from(key)).stale;
    } catch {
      return false;
    }
  }

  /**
   * the stored bytes of an object: JSON without resourceVersion (in the stored form), encrypted
   * when configured; `verbatim`: the request's long values to write as they came (codec/verbatim.ts)
   */
  private encode(key: string, obj: any, verbatim?: Verbatim): Uint8Array {
    const m = obj.metadata;
    const rv = m.resourceVersion;
    // the JSON with metadata.resourceVersion set to `value` for the time of the serialization
    // (undefined leaves it out: a delete would turn metadata into a slow dictionary-mode object)
    const serialize = (value: string | undefined, form: (o: any) => any = (o) => o): string => {
      m.resourceVersion = value;
      try {
        return stringifyJSON(form(obj));
      } finally {
        m.resourceVersion = rv;
      }
    };
    const withPlaceholder = () => serialize(RV_PLACEHOLDER);
    const storageForm = this.strategy.storageForm;
    // one serialization for the stored JSON and the answer's (see splitPlaceholder), when the
    // stored form is the object itself
    let answer: PlaceholderText | undefined;
    if (!storageForm) {
      // a create's shared managedFields list goes in as the text made with it (FRAGMENT_PLACEHOLDER)
      const mfText = managedFieldsText(m.managedFields);
      if (mfText !== undefined) {
        const mf = m.managedFields;
        m.managedFields = FRAGMENT_PLACEHOLDER;
        let text: string;
        try {
          text = stringifyWithVerbatim(obj, verbatim, withPlaceholder);
        } finally {
          m.managedFields = mf;
        }
        answer = splitPlaceholder(text, mfText);
      }
      answer ??= splitPlaceholder(stringifyWithVerbatim(obj, verbatim, withPlaceholder));
    }
    const json = answer ? answer.stored : Buffer.from(serialize(undefined, storageForm ? (o) => storageForm.toStorage(o) : undefined));
    const bytes = this.transformer ? this.transformer.toStorage(json, Buffer.from(key)) : json;
    const w: PendingWrite = { bytes, obj, answer, entry: undefined };
    this.pending.set(key, w);
    return bytes;
  }

  /**
   * The answer of a dry-run write of a CRD converted by its webhook, through another version than
   * the storage one: the object converted to the storage version and back, as Kubernetes' dry-run
   * storage encodes and decodes it. Any other object as it is.
   */
  private async dryRunRoundTrip(obj: any): Promise<any> {
    const convert = this.strategy.convertByWebhook;
    const storage = this.kind.custom?.storage?.version;
    if (!convert || storage === undefined || storage === this.kind.version) return obj;
    const rv = obj.metadata?.resourceVersion;
    const back = await convert(await convert(obj, `${this.kind.group}/${storage}`), this.apiVersion);
    if (back.metadata && rv !== undefined) back.metadata.resourceVersion = rv;
    return back;
  }

  /** a write's pending entry that the cache did not take (its event carried other bytes: a converting storage) */
  private settle(key: string, bytes: Uint8Array): void {
    const p = this.pending.get(key);
    if (p !== undefined && p.bytes === bytes) this.pending.delete(key);
  }

  get(namespace: string, name: string): CacheEntry | undefined {
    return this.cacher.get(this.key(namespace, name));
  }

  mustGet(namespace: string, name: string): CacheEntry {
    const key = this.requestKey(namespace, name);
    const e = this.cacher.get(key);
    if (!e) throw this.readError(key) ?? errors.notFound(this.groupResource, name);
    return e;
  }

  // ---- objects that cannot be read back ----

  /**
   * The answer to a read of a key whose value cannot be read back (undefined when it is not such
   * a key), worded as Kubernetes 1.33 words it: without the gate AllowUnsafeMalformedObjectDeletion
   * an InternalError with the transformer's message (a value that does not decode: the decoder's
   * message); with it, the storage's corrupt-object error naming the key, which tells the
   * operator what the unsafe delete may remove.
   */
  readError(key: string): StatusError | undefined {
    const c = this.cacher.corrupt(key);
    if (!c) return undefined;
    const ce = asCorrupt(c.key, c.error);
    // (a conversion webhook's failure is kube-apiserver's InternalError, whatever the gate)
    if (ce.stage === 'convert') return errors.internal(new Error(ce.detail));
    // Kubernetes' registry names the key without the storage prefix
    const registryKey = key.startsWith('/registry/') ? key.slice('/registry'.length) : key;
    if (this.unsafeDeletion) return new StatusError(500, '', corruptStorageError(registryKey, ce), undefined);
    if (ce.stage === 'transform') return errors.internal(new Error(ce.detail));
    return new StatusError(500, '', ce.detail, undefined);
  }

  /** a list over the keys of `scope` from startKey (inclusive) to endKey (exclusive): its error when some cannot be read */
  listReadError(scope: string, startKey?: string, endKey?: string): StatusError | undefined {
    const corrupt = this.cacher.corruptIn(scope, startKey, endKey);
    return corrupt.length ? this.listError(corrupt) : undefined;
  }

  /**
   * The answer to a list over keys that cannot be read back: with the gate on, 500
   * StorageReadError naming each one (at most 100) in the causes; without it, the first one's
   * error, as Kubernetes' list stops at it.
   */
  listError(corrupt: { key: string; error: Error }[]): StatusError {
    const first = asCorrupt(corrupt[0]!.key, corrupt[0]!.error);
    if (first.stage === 'convert') return errors.internal(new Error(first.detail));
    if (!this.unsafeDeletion) {
      if (first.stage === 'transform') return errors.internal(new Error(`unable to transform key ${JSON.stringify(first.key)}: ${first.detail}`));
      return new StatusError(500, '', first.detail, undefined);
    }
    const causes: StatusCause[] = corrupt
      .slice(0, MAX_CORRUPT_CAUSES)
      .map((c) => ({ reason: 'UnexpectedServerResponse', message: corruptStorageError(c.key, asCorrupt(c.key, c.error)), field: c.key }));
    if (corrupt.length > MAX_CORRUPT_CAUSES) causes.push({ reason: 'FieldValueTooMany', message: 'too many errors, the list is truncated' });
    const details: StatusDetails = { name: 'list' };
    if (this.groupResource.group) details.group = this.groupResource.group;
    details.kind = this.groupResource.name;
    details.causes = causes;
    return new StatusError(500, 'StorageReadError', `failed to read one or more ${qualified(this.groupResource)} from the storage`, details);
  }

  /**
   * DELETE with ignoreStoreReadErrorWithClusterBreakingPotential (the handler has checked the
   * gate, the other options and the caller's authorization): refused, as Kubernetes refuses it,
   * when the stored object reads (or is missing); otherwise the key is removed from storage
   * whatever its finalizers, without preconditions or admission, as Kubernetes' corrupt-object
   * deleter does. Returns whether a key was removed.
   */
  async unsafeDelete(namespace: string, name: string): Promise<boolean> {
    const key = this.requestKey(namespace, name);
    // read from storage itself, not the cache: only a value that really cannot be read goes this way
    const kv = await this.backend.get(key);
    let corrupt = false;
    if (kv) {
      try {
        this.decodeKV(kv);
      } catch (e) {
        if (!(e instanceof CorruptObjectError)) throw e;
        corrupt = true;
      }
    }
    if (!corrupt) {
      throw errors.invalid(this.groupResource, name, [
        field.invalid('ignoreStoreReadErrorWithClusterBreakingPotential', true, 'is exclusively used to delete corrupt object(s), try again by removing this option'),
      ]);
    }
    try {
      await this.backend.delete(key);
      return true;
    } catch (e) {
      if (e instanceof KeyNotFoundError) return false;
      throw e;
    }
  }

  // ---- admission ----

  private admissionOf(a: WriteAdmission, dryRun: boolean, operation: Operation, object: any, oldObject: any) {
    // the options as the operation's own kind (a PUT that creates is a create with CreateOptions);
    // both phases of a write see the same options, as in Kubernetes
    let options: unknown;
    if (operation === 'CONNECT') options = a.request.options;
    else if (a.optionsFor?.operation === operation) options = a.optionsFor.options;
    else {
      options = { kind: OPTIONS_KIND[operation], apiVersion: 'meta.k8s.io/v1', ...(a.request.options ?? {}) };
      a.optionsFor = { operation, options };
    }
    return admissionAttributesOf(this.kind, a.request, operation, object, oldObject, options, dryRun);
  }

  /**
   * the mutating phase: before the strategy prepares the object (plugins change `object` in
   * place); a promise only when a plugin answered with one (see AdmissionChain)
   */
  private admitMutate(opts: WriteOptions, operation: Operation, object: any, oldObject?: any): Promise<void> | undefined {
    const a = opts.admission;
    return a ? a.chain.mutate(this.admissionOf(a, opts.dryRun, operation, object, oldObject)) : undefined;
  }

  /** the validating phase: after the object validated, before it is stored (dry runs too); then the deadline */
  private admitValidate(opts: WriteOptions, operation: Operation, object: any, oldObject?: any): Promise<void> | undefined {
    const a = opts.admission;
    if (!a) return undefined;
    const r = a.chain.validate(this.admissionOf(a, opts.dryRun, operation, object, oldObject));
    if (r === undefined) {
      a.deadline?.check();
      return undefined;
    }
    return r.then(() => a.deadline?.check());
  }

  // ---- create ----

  /** Validate metadata common to every kind and the kind's own rules; throws 422 Invalid. */
  private validateObject(obj: any, old?: any, sub?: string, warnings?: string[]): void {
    const m = obj.metadata;
    const errs: FieldError[] = [];
    if (m.generateName && typeof m.generateName === 'string' && !old) {
      for (const msg of validateName(this.strategy.nameRule, m.generateName, true)) errs.push(field.invalid('metadata.generateName', m.generateName, msg));
    }
    if (!m.name) errs.push(field.required('metadata.name', 'name or generateName is required'));
    else for (const msg of validateName(this.strategy.nameRule, m.name, false)) errs.push(field.invalid('metadata.name', m.name, msg));
    if (this.kind.namespaced) {
      if (!m.namespace) errs.push(field.required('metadata.namespace', ''));
    } else if (m.namespace) errs.push(field.forbidden('metadata.namespace', 'not allowed on this type'));
    // (each list joined only when it has errors: a spread call per list costs on every write)
    const labelErrs = validateLabels(m.labels, 'metadata.labels');
    if (labelErrs.length) errs.push(...labelErrs);
    const annotationErrs = validateAnnotations(m.annotations, 'metadata.annotations');
    if (annotationErrs.length) errs.push(...annotationErrs);
    if (m.finalizers !== undefined && !Array.isArray(m.finalizers)) errs.push(field.invalid('metadata.finalizers', m.finalizers, 'must be a list'));
    const kindErrs = old ? (sub ? this.strategy.validateSubresource(sub, obj, old, warnings) : this.strategy.validateUpdate(obj, old, warnings)) : this.strategy.validate(obj);
    if (kindErrs.length) errs.push(...kindErrs);
    if (old) {
      if (m.name !== old.metadata.name) errs.push(field.invalid('metadata.name', m.name, 'field is immutable'));
      if (m.namespace !== old.metadata.namespace) errs.push(field.invalid('metadata.namespace', m.namespace, 'field is immutable'));
      const deletion = deletionFieldErrors.get(obj);
      if (deletion) errs.push(...deletion);
    }
    if (errs.length) throw errors.invalid(this.groupKind, m.name ?? '', errs);
  }

  /**
   * Create an object. `obj` is owned by the store from here on. The namespace of a namespaced
   * object must already be set (from the URL). Returns the object as stored (its cache entry's
   * object), or, for a dry run, the object as it would have been stored.
   */
  async create(obj: any, opts: WriteOptions): Promise<any> {
    return (await this.createWithEntry(obj, opts)).obj;
  }

  /**
   * create(), with the cache entry of the object as stored (undefined for a dry run): the answer
   * of a create is written from it, with no second look-up by a key made again
   */
  async createWithEntry(obj: any, opts: WriteOptions): Promise<{ obj: any; entry: CacheEntry | undefined }> {
    obj.metadata ??= {};
    if (opts.admission) {
      const mutating = this.admitMutate(opts, 'CREATE', obj);
      if (mutating) await mutating;
      obj.metadata ??= {};
    }
    let m = obj.metadata;
    if (!this.kind.namespaced) delete m.namespace;
    const sentRV = opts.refuseResourceVersion === true && m.resourceVersion !== undefined && m.resourceVersion !== null && m.resourceVersion !== '' && m.resourceVersion !== '0';
    const generated = !m.name && typeof m.generateName === 'string' && m.generateName !== '';
    // (a delete only where there is something to delete: it costs a runtime call each)
    for (let i = 0; i < SERVER_SET_ON_CREATE.length; i++) if (SERVER_SET_ON_CREATE[i]! in m) delete m[SERVER_SET_ON_CREATE[i]!];
    m.uid = newUUID();
    m.creationTimestamp = rfc3339(Date.now());
    if (this.strategy.generation) m.generation = 1;
    else if ('generation' in m) delete m.generation;
    // (the name before the preparation, which may read it, as Kubernetes' store generates it
    // with the uid and the creation time, before BeforeCreate: a Job's labels carry it)
    if (generated) m.name = generateName(m.generateName);
    this.strategy.prepareForCreate(obj, opts.admission?.request.user, opts.dryRun === true);
    let stored = false;
    try {
      m = obj.metadata = inObjectMetaOrder(m);
      this.validateObject(obj);
      if (this.kind.namespaced) this.hooks.checkNamespace?.(m.namespace, this.groupResource, m.name);
      const validating = this.admitValidate(opts, 'CREATE', obj);
      if (validating) await validating;
      // (Kubernetes' store makes the key after validation and admission, a dry run's too)
      if (typeof m.name === 'string') this.requestKey(m.namespace ?? '', m.name);
      if (opts.dryRun) {
        if (!generated && this.get(m.namespace ?? '', m.name)) throw errors.alreadyExists(this.groupResource, m.name);
        return { obj: await this.dryRunRoundTrip(obj), entry: undefined };
      }
      // (etcd3's Create refuses it with ErrResourceVersionSetOnCreate, which kube-apiserver answers
      // as a 500; Keelson answers the client's mistake with 400 and the same words. A dry run, which
      // does not reach storage, passes, as there.)
      if (sentRV) throw errors.badRequest('resourceVersion should not be set on objects to be created');
      const out = await this.createStored(obj, generated, opts.verbatim);
      stored = true;
      return out;
    } finally {
      const after = this.strategy.afterCreate?.(obj, stored);
      if (after) await after;
    }
  }

  private async createStored(obj: any, generated: boolean, verbatim: Verbatim | undefined): Promise<{ obj: any; entry: CacheEntry | undefined }> {
    const m = obj.metadata;
    for (let attempt = 0; ; attempt++) {
      const key = this.key(m.namespace ?? '', m.name);
      try {
        const bytes = this.encode(key, obj, verbatim);
        // (a look-up in the few writes in flight, by a key whose hash encode() has just made)
        const written = this.pending.get(key);
        // (not held through the commit's wait, where it would keep the request's text alive; a
        // retry under another generated name, rare, serializes the plain way)
        verbatim = undefined;
        const kv = await this.backend.create(key, bytes);
        // the entry the cache made of this write as it committed (else, as when the cache was
        // restarting, it is looked up)
        const e = written?.entry ?? this.cacher.get(key);
        // (a write the cache did not take as it was written: a CRD version whose storage converts)
        if (written !== undefined && written.entry === undefined) this.settle(key, written.bytes);
        if (e && e.modRevision === kv.modRevision) return { obj: e.obj, entry: e };
        const unreadable = this.readError(key);
        if (unreadable) throw unreadable;
        obj.metadata.resourceVersion = String(kv.modRevision);
        return { obj, entry: undefined };
      } catch (err) {
        this.pending.delete(key);
        if (err instanceof KeyExistsError) {
          if (generated && attempt < MAX_GENERATE_ATTEMPTS) {
            const from = m.name;
            m.name = generateName(m.generateName);
            this.strategy.renamed?.(obj, from);
            continue;
          }
          if (generated) throw errors.generateNameConflict(this.groupResource, m.name, 1);
          // (a caller that looks again, as an apply does, then finds the object)
          await this.caughtUp(err.revision);
          throw errors.alreadyExists(this.groupResource, m.name);
        }
        throw err;
      }
    }
  }

  // ---- update ----

  /**
   * Replace an object (PUT on the main resource). `obj` carries the client's full object; its
   * metadata.resourceVersion, if set, must match the stored one.
   */
  async update(namespace: string, name: string, obj: any, options: WriteOptions): Promise<{ obj: any; created: boolean; entry?: CacheEntry }> {
    // (the request's verbatim spans serve the first write only: `opts`, used through the retries,
    // does not hold them, and with them the request's text, through the commit's wait)
    const { verbatim: sent, ...opts } = options;
    let verbatim = sent;
    obj.metadata ??= {};
    const m = obj.metadata;
    if (this.kind.namespaced) m.namespace = namespace;
    else delete m.namespace;
    const key = this.requestKey(namespace, name);
    for (;;) {
      const cur = this.cacher.get(key);
      if (!cur) {
        const unreadable = this.readError(key);
        if (unreadable) throw unreadable;
        if (!this.strategy.allowCreateOnUpdate) throw errors.notFound(this.groupResource, name);
        if (m.resourceVersion) throw errors.notFound(this.groupResource, name);
        m.name = name;
        const created = await this.createWithEntry(obj, { ...opts, verbatim });
        return { obj: created.obj, created: true, entry: created.entry };
      }
      const old = cur.obj;
      const wantRV = m.resourceVersion;
      if (m.uid && m.uid !== old.metadata.uid) {
        // a uid in the body is a precondition of the update, as Kubernetes' storage checks it
        throw errors.conflict(
          this.groupResource,
          name,
          `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${m.uid}, UID in object meta: ${old.metadata.uid}`,
        );
      }
      if (wantRV === undefined || wantRV === '') {
        if (!this.strategy.allowUnconditionalUpdate) {
          throw errors.invalid(this.groupKind, name, [field.invalid('metadata.resourceVersion', '', 'must be specified for an update')]);
        }
      } else if (wantRV !== old.metadata.resourceVersion) {
        throw errors.conflict(this.groupResource, name, 'the object has been modified; please apply your changes to the latest version and try again');
      }
      let body = obj;
      if (opts.admission) {
        // a retry starts again from the client's object, not from what the plugins made of it
        body = structuredClone(obj);
        const mutating = this.admitMutate(opts, 'UPDATE', body, old);
        if (mutating) await mutating;
        body.metadata ??= {};
      }
      const next = this.prepareUpdate(body, old, opts.dryRun === true);
      let stored = false;
      try {
      this.validateObject(next, old, undefined, opts.admission?.request.warnings);
      const validating = this.admitValidate(opts, 'UPDATE', next, old);
      if (validating) await validating;
      if (sameObject(next, old) && !(await this.isStale(key, cur.modRevision))) return { obj: old, created: false, entry: cur };
      if (opts.dryRun) {
        next.metadata.resourceVersion = old.metadata.resourceVersion;
        return { obj: await this.dryRunRoundTrip(next), created: false };
      }
      try {
        const removed = this.isTerminatingAndDone(next);
        if (removed) {
          // the update that empties the finalizers is never written: the object is deleted as it
          // was stored (its DELETED event shows that), and the answer is the object of the
          // update, as Kubernetes' deleteWithoutFinalizers answers (carryMeta gave it the
          // stored resourceVersion)
          await this.backend.delete(key, cur.modRevision);
          await this.afterDelete(old);
          return { obj: next, created: false };
        }
        const bytes = this.encode(key, next, verbatim);
        verbatim = undefined;
        const kv = await this.backend.update(key, bytes, cur.modRevision);
        stored = true;
        this.settle(key, bytes);
        const e = this.cacher.get(key);
        if (e && e.modRevision === kv.modRevision) return { obj: e.obj, created: false, entry: e };
        const unreadable = this.readError(key);
        if (unreadable) throw unreadable;
        return { obj: next, created: false };
      } catch (err) {
        this.pending.delete(key);
        if (err instanceof ConflictError) {
          // the object changed between our read and our write: a conditional update fails,
          // an unconditional one is retried against the new state
          if (wantRV) throw errors.conflict(this.groupResource, name, 'the object has been modified; please apply your changes to the latest version and try again');
          await this.cacher.waitUntilFresh(err.current?.modRevision ?? 0, 1000);
          m.resourceVersion = undefined;
          continue;
        }
        if (err instanceof KeyNotFoundError) {
          if (await this.caughtUp(err.revision)) continue;
          throw errors.notFound(this.groupResource, name);
        }
        throw err;
      }
      } finally {
        const after = this.strategy.afterUpdate?.(next, old, stored);
        if (after) await after;
      }
    }
  }

  /**
   * Apply a change computed from the current object (patches, subresources, finalizer removal):
   * `mutate` gets a deep copy of the current object and returns the new one. Retries on conflicts
   * unless the change asks for a specific resourceVersion.
   */
  async guaranteedUpdate(namespace: string, name: string, mutate: (copy: any) => any, opts: WriteOptions & { main?: boolean; subresource?: string }): Promise<any> {
    return (await this.guaranteedUpdateWithEntry(namespace, name, mutate, opts)).obj;
  }

  /**
   * guaranteedUpdate(), with the cache entry of the object as it now stands when it is stored (the
   * entry of the update's own commit, or the current one when nothing changed; undefined for a
   * dry run or a removal): the answer of a write is written from it, with no second look-up
   */
  async guaranteedUpdateWithEntry(
    namespace: string,
    name: string,
    mutate: (copy: any) => any,
    opts: WriteOptions & { main?: boolean; subresource?: string },
  ): Promise<{ obj: any; entry?: CacheEntry }> {
    const key = this.requestKey(namespace, name);
    for (;;) {
      const cur = this.cacher.get(key);
      if (!cur) throw this.readError(key) ?? errors.notFound(this.groupResource, name);
      const old = cur.obj;
      let next = mutate(structuredClone(old));
      next.metadata ??= {};
      if (opts.admission) {
        const mutating = this.admitMutate(opts, 'UPDATE', next, old);
        if (mutating) await mutating;
        next.metadata ??= {};
      }
      const wantRV = next.metadata.resourceVersion;
      if (wantRV && wantRV !== old.metadata.resourceVersion) {
        throw errors.conflict(this.groupResource, name, 'the object has been modified; please apply your changes to the latest version and try again');
      }
      const main = opts.main !== false;
      if (main) next = this.prepareUpdate(next, old, opts.dryRun === true);
      else {
        carryMeta(next, old);
        if ((opts.subresource ?? 'status') === 'status') keepAllButStatus(next, old);
        this.strategy.prepareForSubresourceUpdate?.(opts.subresource ?? 'status', next, old);
        next.metadata = inObjectMetaOrder(next.metadata);
      }
      let stored = false;
      try {
        this.validateObject(next, old, main ? undefined : opts.subresource ?? 'status', opts.admission?.request.warnings);
        const validating = this.admitValidate(opts, 'UPDATE', next, old);
        if (validating) await validating;
        if (sameObject(next, old) && !(await this.isStale(key, cur.modRevision))) return { obj: old, entry: cur };
        if (opts.dryRun) return { obj: await this.dryRunRoundTrip(next) };
        if (this.isTerminatingAndDone(next)) {
          // the update that empties the finalizers is never written; the answer is its object (see update)
          await this.backend.delete(key, cur.modRevision);
          stored = true;
          await this.afterDelete(old);
          return { obj: next };
        }
        const bytes = this.encode(key, next);
        const kv = await this.backend.update(key, bytes, cur.modRevision);
        stored = true;
        this.settle(key, bytes);
        const e = this.cacher.get(key);
        if (e && e.modRevision === kv.modRevision) return { obj: e.obj, entry: e };
        const unreadable = this.readError(key);
        if (unreadable) throw unreadable;
        return { obj: next };
      } catch (err) {
        this.pending.delete(key);
        if (err instanceof ConflictError) {
          // the object changed between our read and our write: the change is made again from the
          // new state, as Kubernetes' GuaranteedUpdate does. `wantRV` is not the client's
          // precondition here: `mutate` works on a copy of the stored object, which carries its
          // resourceVersion. A change that names a resourceVersion of its own (a patch holding
          // one, a status body) names it again on the new state, and the check above refuses it.
          await this.cacher.waitUntilFresh(err.current?.modRevision ?? 0, 1000);
          continue;
        }
        if (err instanceof KeyNotFoundError) {
          // deleted since the cache was read (perhaps not yet committed): look again once the cache has the deletion
          if (await this.caughtUp(err.revision)) continue;
          throw errors.notFound(this.groupResource, name);
        }
        throw err;
      } finally {
        const after = main ? this.strategy.afterUpdate?.(next, old, stored) : undefined;
        if (after) await after;
      }
    }
  }

  /** the strategy's afterDelete, awaited when it returns a promise */
  private async afterDelete(obj: any): Promise<void> {
    const after = this.strategy.afterDelete?.(obj);
    if (after) await after;
  }

  /** the new object of an update of the main resource: server-owned fields carried over */
  private prepareUpdate(obj: any, old: any, dryRun: boolean): any {
    const next = obj;
    carryMeta(next, old);
    if (this.strategy.statusSubresource) {
      if (old.status === undefined) delete next.status;
      else next.status = old.status;
    }
    this.strategy.prepareForUpdate(next, old, dryRun);
    if (this.strategy.generation) {
      const g = old.metadata.generation ?? 1;
      const st = this.strategy;
      const changed =
        (st.generationChanged ? st.generationChanged(next, old) : !jsonEqual(next.spec, old.spec)) ||
        (st.generationOnAnnotations === true && !jsonEqual(next.metadata.annotations, old.metadata.annotations));
      next.metadata.generation = changed ? g + 1 : g;
    }
    next.metadata = inObjectMetaOrder(next.metadata);
    return next;
  }

  private isTerminatingAndDone(obj: any): boolean {
    if (!obj.metadata.deletionTimestamp) return false;
    if ((obj.metadata.finalizers ?? []).length > 0) return false;
    if (this.strategy.readyToRemove && !this.strategy.readyToRemove(obj)) return false;
    if (obj.metadata.deletionGracePeriodSeconds && obj.metadata.deletionGracePeriodSeconds > 0) return false;
    return true;
  }

  // ---- delete ----

  async delete(namespace: string, name: string, opts: DeleteOptions): Promise<DeleteResult> {
    const key = this.requestKey(namespace, name);
    // Kubernetes' delete runs the mutating plugins without an object, the validating ones on the stored object
    const mutating = this.admitMutate(opts, 'DELETE', undefined, undefined);
    if (mutating) await mutating;
    for (;;) {
      const cur = this.cacher.get(key);
      if (!cur) throw this.readError(key) ?? errors.notFound(this.groupResource, name);
      const old = cur.obj;
      const pre = opts.preconditions;
      if (pre?.uid && pre.uid !== old.metadata.uid) {
        throw errors.conflict(
          this.strategy.namespaceStyleDelete ? this.groupResource : this.groupKind,
          name,
          this.strategy.namespaceStyleDelete
            ? `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`
            : `the UID in the precondition (${pre.uid}) does not match the UID in record (${old.metadata.uid}). The object might have been deleted and then recreated`,
        );
      }
      if (pre?.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
        throw errors.conflict(
          this.strategy.namespaceStyleDelete ? this.groupResource : this.groupKind,
          name,
          this.strategy.namespaceStyleDelete
            ? `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`
            : `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${old.metadata.resourceVersion}). The object might have been modified`,
        );
      }
      const validating = this.admitValidate(opts, 'DELETE', undefined, old);
      if (validating) await validating;
      const plan = this.deletionOf(old, opts);
      if (plan === 'pending') return { obj: old, removed: false };
      const { next, graceful, markOnly } = plan;
      const pendingFinalizers = (next.metadata.finalizers ?? []).length > 0;
      if (graceful || pendingFinalizers || markOnly || !sameObject(next, old)) {
        // updateForGracefulDeletionAndFinalizers: the object marked for deletion (and its finalizers
        // set), then removed at once when its grace period is 0 and nothing else holds it, as
        // Kubernetes does in two writes
        const deleteNow = !markOnly && !pendingFinalizers && (!graceful || (next.metadata.deletionGracePeriodSeconds ?? 0) === 0) && (this.strategy.readyToRemove?.(next) ?? true);
        const changed = !sameObject(next, old) && (graceful || pendingFinalizers || markOnly);
        if (changed) next.metadata = inObjectMetaOrder(next.metadata);
        if (!changed && !deleteNow) return { obj: old, removed: false };
        if (opts.dryRun) return { obj: changed ? next : old, removed: deleteNow };
        try {
          let rev = cur.modRevision;
          let last = old;
          if (changed) {
            const bytes = this.encode(key, next);
            const kv = await this.backend.update(key, bytes, cur.modRevision);
            this.settle(key, bytes);
            rev = kv.modRevision;
            const e = this.cacher.get(key);
            last = e && e.modRevision === kv.modRevision ? e.obj : atRevision(next, kv.modRevision);
          }
          if (!deleteNow) return { obj: last, removed: false };
          const kv = await this.backend.delete(key, rev);
          await this.afterDelete(last);
          return { obj: atRevision(last, kv.modRevision), removed: true };
        } catch (err) {
          this.pending.delete(key);
          if (err instanceof ConflictError) {
            await this.cacher.waitUntilFresh(err.current?.modRevision ?? 0, 1000);
            continue;
          }
          if (err instanceof KeyNotFoundError) {
            if (await this.caughtUp(err.revision)) continue;
            throw errors.notFound(this.groupResource, name);
          }
          throw err;
        }
      }
      if (opts.dryRun) return { obj: old, removed: true };
      try {
        const kv = await this.backend.delete(key, cur.modRevision);
        await this.afterDelete(old);
        const deleted = atRevision(old, kv.modRevision);
        return { obj: deleted, removed: true };
      } catch (err) {
        if (err instanceof ConflictError) {
          await this.cacher.waitUntilFresh(err.current?.modRevision ?? 0, 1000);
          continue;
        }
        if (err instanceof KeyNotFoundError) {
          if (await this.caughtUp(err.revision)) continue;
          throw errors.notFound(this.groupResource, name);
        }
        throw err;
      }
    }
  }

  /**
   * What a delete makes of the stored object (a copy), as Kubernetes' BeforeDelete and
   * updateForGracefulDeletionAndFinalizers make it: 'pending' when a graceful deletion is under
   * way and the request does not shorten it (the object is answered as it is); otherwise the new
   * object (deletionTimestamp, grace period, the garbage collector's finalizers), whether the
   * delete is graceful, and whether it only marks the object (a namespace's first delete).
   */
  private deletionOf(old: any, opts: DeleteOptions): 'pending' | { next: any; graceful: boolean; markOnly: boolean } {
    const next = structuredClone(old);
    const m = next.metadata;
    const now = Date.now();
    let graceful = false;
    let markOnly = false;
    const requested = opts.gracePeriodSeconds === undefined ? undefined : opts.gracePeriodSeconds < 0 ? 1 : opts.gracePeriodSeconds;
    if (m.deletionTimestamp) {
      const g = m.deletionGracePeriodSeconds;
      if ((typeof g === 'number' || typeof g === 'bigint') && g > 0) {
        // only a shorter grace period may be asked for: the timestamp moves back by the difference
        // (in Go's int64 nanoseconds, which wrap for a period beyond ~292 years)
        if (requested === undefined || requested >= g) return 'pending';
        let period = requested;
        let at = addGoSeconds(addGoSeconds(Date.parse(m.deletionTimestamp), -g), period);
        if (at < now) {
          at = now;
          if (period !== 0) period = 1;
        }
        m.deletionTimestamp = rfc3339(at);
        m.deletionGracePeriodSeconds = period;
        graceful = true;
      }
    }
    const decision = this.strategy.beforeDelete?.(next, requested);
    if (decision?.unchanged) return 'pending';
    if (decision?.markOnly) {
      markOnly = true;
      if (!m.deletionTimestamp) m.deletionTimestamp = rfc3339(now);
    } else if (decision?.graceful && !old.metadata.deletionTimestamp) {
      const grace = decision.gracePeriodSeconds ?? 0;
      m.deletionTimestamp = rfc3339(addGoSeconds(now, grace));
      m.deletionGracePeriodSeconds = grace;
      // marking an object for deletion is a change its controllers must see
      if (typeof m.generation === 'number' && m.generation > 0) m.generation++;
      graceful = true;
    }
    const gc = this.garbageCollectionFinalizers(m.finalizers ?? [], opts);
    if (gc) {
      if (gc.length) m.finalizers = gc;
      else delete m.finalizers;
    }
    if (!graceful && !markOnly && (m.finalizers ?? []).length > 0) {
      // markAsDeleting: a deletion held by finalizers has no grace period
      if (!m.deletionTimestamp && typeof m.generation === 'number' && m.generation > 0) m.generation++;
      if (!m.deletionTimestamp || Date.parse(m.deletionTimestamp) > now) m.deletionTimestamp = rfc3339(now);
      m.deletionGracePeriodSeconds = 0;
    }
    return { next, graceful, markOnly };
  }

  /**
   * deletionFinalizersForGarbageCollection: the finalizers the delete leaves for the garbage
   * collector (`orphan`, `foregroundDeletion`), by the request's orphanDependents, then its
   * propagationPolicy, then the finalizers the object has, then the kind's default policy;
   * undefined when they stay as they are (or when garbage collection is off, or the kind has none).
   */
  private garbageCollectionFinalizers(current: string[], opts: DeleteOptions): string[] | undefined {
    const policy = this.strategy.garbageCollectionPolicy ?? 'DeleteDependents';
    if (!this.garbageCollection || policy === 'Unsupported') return undefined;
    const explicit = opts.orphanDependents !== undefined ? (opts.orphanDependents ? 'Orphan' : 'Background') : opts.propagationPolicy;
    let orphan: boolean;
    let foreground: boolean;
    if (explicit === 'Orphan' || explicit === 'Background' || explicit === 'Foreground') {
      orphan = explicit === 'Orphan';
      foreground = explicit === 'Foreground' && opts.orphanDependents === undefined;
    } else {
      const first = current.find((f) => f === 'orphan' || f === 'foregroundDeletion');
      orphan = first ? first === 'orphan' : policy === 'OrphanDependents';
      foreground = first === 'foregroundDeletion';
    }
    const out = current.filter((f) => f !== 'orphan' && f !== 'foregroundDeletion');
    if (orphan) out.push('orphan');
    if (foreground) out.push('foregroundDeletion');
    const same = out.length === current.length && out.every((f) => current.includes(f));
    return same ? undefined : out;
  }

  /**
   * Waits until the cache holds the state the storage refused a write on (KeyExistsError and
   * KeyNotFoundError carry the newest revision it had given out; the write that made the key
   * exist, or go, may still be committing). Whether the cache was behind: then a second look at
   * the cache sees what the storage saw.
   */
  private async caughtUp(revision: number | undefined): Promise<boolean> {
    if (revision === undefined || this.cacher.revision() >= revision) return false;
    await this.cacher.waitUntilFresh(revision, 1000);
    return true;
  }
}

/**
 * A status write changes the status and the metadata: every other field (the spec) is the stored
 * one, as Kubernetes' status strategies copy the old spec back; so labels, annotations and
 * finalizers sent to /status are written. Strategies reset more (a Deployment's labels, a Pod's
 * owner references) or less (a custom resource keeps its status only).
 */
function keepAllButStatus(next: any, old: any): void {
  for (const k of new Set([...Object.keys(next), ...Object.keys(old)])) {
    if (k === 'metadata' || k === 'status' || k === 'kind' || k === 'apiVersion') continue;
    if (old[k] === undefined) delete next[k];
    else next[k] = structuredClone(old[k]);
  }
}

/**
 * The changes to metadata.deletionTimestamp and deletionGracePeriodSeconds an update makes that
 * ValidateObjectMetaUpdate refuses (field is immutable), by the new object, for validateObject
 */
const deletionFieldErrors = new WeakMap<object, FieldError[]>();

/** a Go time.Time's String() of an RFC 3339 time, in UTC: how a field error prints a metav1.Time */
function goTimeString(t: string): string {
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return t;
  const iso = d.toISOString();
  const frac = iso.slice(20, 23).replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${frac ? `.${frac}` : ''} +0000 UTC`;
}

function carryMeta(next: any, old: any): void {
  const m = next.metadata;
  const o = old.metadata;
  m.name = o.name;
  if (o.namespace !== undefined) m.namespace = o.namespace;
  m.uid = o.uid;
  m.creationTimestamp = o.creationTimestamp;
  if (o.generation !== undefined) m.generation = o.generation;
  else delete m.generation;
  // BeforeUpdate: a deletion timestamp set stays as it is, a grace period left out stays; any
  // other change of the two is refused as immutable
  const errs: FieldError[] = [];
  if (o.deletionTimestamp !== undefined) m.deletionTimestamp = o.deletionTimestamp;
  else if (m.deletionTimestamp !== undefined && m.deletionTimestamp !== null) {
    errs.push(kInvalid('metadata.deletionTimestamp', new GoRepr(goTimeString(String(m.deletionTimestamp))), 'field is immutable'));
    delete m.deletionTimestamp;
  } else delete m.deletionTimestamp;
  if (m.deletionGracePeriodSeconds === undefined || m.deletionGracePeriodSeconds === null) {
    if (o.deletionGracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = o.deletionGracePeriodSeconds;
    else delete m.deletionGracePeriodSeconds;
  } else if (m.deletionGracePeriodSeconds !== o.deletionGracePeriodSeconds) {
    errs.push(field.invalid('metadata.deletionGracePeriodSeconds', m.deletionGracePeriodSeconds, 'field is immutable'));
    if (o.deletionGracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = o.deletionGracePeriodSeconds;
    else delete m.deletionGracePeriodSeconds;
  }
  if (errs.length) deletionFieldErrors.set(next, errs);
  delete m.selfLink;
  m.resourceVersion = o.resourceVersion;
}

export function generateName(base: string): string {
  const b = base.length > 58 ? base.slice(0, 58) : base;
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_CHARS[randomInt(GENERATE_CHARS.length)];
  return b + s;
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** equality of two JSON values, key order aside */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ak = Object.keys(a as object).filter((k) => (a as any)[k] !== undefined);
  const bk = Object.keys(b as object).filter((k) => (b as any)[k] !== undefined);
  if (ak.length !== bk.length) return false;
  for (const k of ak) if (!jsonEqual((a as any)[k], (b as any)[k])) return false;
  return true;
}

/** an update changes nothing when the objects are equal but for resourceVersion */
function sameObject(next: any, old: any): boolean {
  return jsonEqual(next, old);
}

export { StatusError };

/**
 * The values of a kind's selectable fields (beyond metadata.name and metadata.namespace), by
 * their dotted path: what a frozen cache entry keeps for field selectors (storage/cacher.ts).
 */
function selectableFieldsOf(kind: KindDecl): ((obj: any) => Record<string, string>) | undefined {
  const paths: string[] = [];
  for (const f of kind.selectableFields) {
    const { path } = selectableField(f);
    if (path !== 'metadata.name' && path !== 'metadata.namespace' && !paths.includes(path)) paths.push(path);
  }
  if (paths.length === 0) return undefined;
  const split = paths.map((p) => p.split('.'));
  return (obj) => {
    const out: Record<string, string> = {};
    for (let i = 0; i < paths.length; i++) out[paths[i]!] = fieldValue(obj, split[i]!);
    return out;
  };
}

/** IsValidPathSegmentName: why a name cannot be one segment of a path (none: it can) */
export function pathSegmentNameProblems(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  const out: string[] = [];
  if (name.includes('/')) out.push("may not contain '/'");
  if (name.includes('%')) out.push("may not contain '%'");
  return out;
}
