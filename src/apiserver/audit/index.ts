// The audit log of the API server (--audit-policy-file with --audit-log-path), as kube-apiserver
// records it:
//
// - after authentication the policy decides the request's level; at None (or without a policy)
//   nothing is recorded and nothing more is done for the request;
// - stages: RequestReceived when the request is accepted, ResponseStarted when a long-running
//   request (watch, exec, log...) sends its headers, ResponseComplete when the response is done,
//   Panic for a request that failed with an unexpected error; a rule's omitStages drop stages;
// - a request refused before it is authenticated (401, or an invalid `timeout` parameter) is one
//   event at ResponseStarted, evaluated with no user;
// - Metadata: the user, impersonated user, source IPs, user agent, objectRef (completed from the
//   body of a create or update), responseStatus (the Status fields of an error) and annotations
//   (authorization.k8s.io/decision and reason, and the admission plugins' annotations);
//   Request adds requestObject (the body as the client sent it, or the patch); RequestResponse
//   adds responseObject (the response body, except for long-running requests).
import { parseJSON } from '../../codec/int64.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { yaml } from '../../codec/yaml-lazy.js';
import { decodeEnvelope, decodeMessage } from '../../codec/protobuf.js';
import { BUILTIN_KINDS } from '../../schema/kinds.js';
import { errors, StatusError } from '../../machinery/errors.js';
import type { UserInfo } from '../authz.js';
import { nowMicros, type RequestScope } from '../limits.js';
import { MAX_BODY_BYTES } from '../handlers.js';
import { auditUser, microTime, sortedMap, sourceIPs, userAgentOf, withoutManagedFields, type AuditEvent, type AuditObjectReference, type AuditResponseStatus, type AuditUserInfo } from './event.js';
import { levelRank, PolicyRuleEvaluator, type AuditAttributes, type Policy, type RequestAuditConfig, type Stage } from './policy.js';
import type { AuditSink } from './log.js';

export { loadPolicyFile, parsePolicy, PolicyRuleEvaluator, type Policy, type Level, type Stage } from './policy.js';
export { LogBackend, defaultAuditLogOptions, validateAuditLogOptions, type AuditLogOptions, type AuditSink } from './log.js';
export type { AuditEvent } from './event.js';

const METADATA = levelRank('Metadata');
const REQUEST = levelRank('Request');
const REQUEST_RESPONSE = levelRank('RequestResponse');

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** the request's Audit-ID: the client's own `Audit-ID` header, else a new UUID */
export function auditIDOf(req: IncomingMessage, newID: () => string): string {
  const h = req.headers['audit-id'];
  const v = Array.isArray(h) ? h[0] : h;
  return v ? v : newID();
}

/**
 * The bytes of a request body as the handler reads them, kept for the audit event (taken as the
 * request arrives, so nothing is read twice; at most the body limit is kept).
 */
export class BodyTap {
  private chunks: Buffer[] = [];
  private size = 0;
  private stopped = false;

  constructor(req: IncomingMessage) {
    const push = req.push;
    const tap = this;
    // what came before the tap (HTTP/1.1 handles a request once the bytes of its read are in)
    const early = (req as { buffered?(): readonly Buffer[] }).buffered?.();
    if (early) for (const b of early) tap.take(b);
    req.push = function (this: IncomingMessage, chunk: any, encoding?: BufferEncoding) {
      if (chunk) tap.take(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, encoding));
      return push.call(this, chunk, encoding);
    };
  }

  private take(b: Buffer): void {
    if (this.stopped) return;
    this.size += b.length;
    if (this.size > MAX_BODY_BYTES + 1) this.stop();
    else this.chunks.push(b);
  }

  stop(): void {
    this.stopped = true;
    this.chunks = [];
  }

  /** the body, when it was kept whole */
  bytes(): Buffer | undefined {
    if (this.stopped) return undefined;
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
  }
}

const META_TYPES: Record<string, string> = {
  Status: 'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
  DeleteOptions: 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
};

/** a Protobuf (`k8s\0` envelope) object in its JSON form, for the kinds Keelson serves */
function decodeProtobufDocument(body: Buffer): unknown {
  const env = decodeEnvelope(body);
  const slash = env.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : env.apiVersion.slice(0, slash);
  const version = slash < 0 ? env.apiVersion : env.apiVersion.slice(slash + 1);
  const list = env.kind.endsWith('List');
  const base = list ? env.kind.slice(0, -4) : env.kind;
  let type = META_TYPES[env.kind];
  if (!type) {
    const k = BUILTIN_KINDS.find((d) => d.group === group && d.version === version && d.kind === base);
    if (!k) return undefined;
    type = list ? `${k.type}List` : k.type;
  }
  const obj = decodeMessage(type, env.raw) as Record<string, unknown>;
  return { kind: env.kind, apiVersion: env.apiVersion, ...obj };
}

/** a JSON, YAML or Protobuf document as an object (undefined for other media types or bad bytes) */
function parseDocument(body: Buffer | undefined, contentType: string | undefined): unknown {
  if (!body || body.length === 0) return undefined;
  const ct = (contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase();
  try {
    if (ct === 'application/json' || ct.endsWith('+json') || ct === '*/*' || ct === '') return parseJSON(body.toString('utf8'));
    if (ct === 'application/yaml' || ct.endsWith('+yaml') || ct === 'text/yaml') return yaml().parse(body.toString('utf8'));
    if (ct === 'application/vnd.kubernetes.protobuf') return decodeProtobufDocument(body);
  } catch {
    return undefined;
  }
  return undefined;
}

function attributes(info: RequestScope['info'], user: UserInfo | undefined): AuditAttributes {
  return {
    user,
    verb: info.verb,
    isResourceRequest: info.isResourceRequest,
    path: info.path,
    apiGroup: info.apiGroup,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name: info.name,
  };
}

function objectRefOf(info: RequestScope['info']): AuditObjectReference | undefined {
  if (!info.isResourceRequest) return undefined;
  const ref: AuditObjectReference = {};
  if (info.resource) ref.resource = info.resource;
  if (info.namespace) ref.namespace = info.namespace;
  if (info.name) ref.name = info.name;
  if (info.apiGroup) ref.apiGroup = info.apiGroup;
  if (info.apiVersion) ref.apiVersion = info.apiVersion;
  if (info.subresource) ref.subresource = info.subresource;
  return ref;
}

/** the objectRef fields in Kubernetes' order (resource, namespace, name, uid, apiGroup, apiVersion, resourceVersion, subresource) */
function orderedRef(r: AuditObjectReference): AuditObjectReference {
  const out: AuditObjectReference = {};
  for (const k of ['resource', 'namespace', 'name', 'uid', 'apiGroup', 'apiVersion', 'resourceVersion', 'subresource'] as const) if (r[k]) out[k] = r[k];
  return out;
}

export function statusOf(se: StatusError): AuditResponseStatus {
  const s = { metadata: {}, status: 'Failure', message: se.message } as AuditResponseStatus;
  if (se.reason) s.reason = se.reason;
  if (se.details) s.details = se.details;
  s.code = se.code;
  return s;
}

export class Auditor {
  private readonly evaluator: PolicyRuleEvaluator;

  constructor(
    policy: Policy,
    private readonly sink: AuditSink,
    /** blocking-strict: a request whose RequestReceived event cannot be written is refused */
    private readonly strict = false,
  ) {
    this.evaluator = new PolicyRuleEvaluator(policy);
  }

  /** a body tap for a request that may carry one (taken as soon as the request arrives) */
  tap(req: IncomingMessage, method: string): BodyTap | undefined {
    return BODY_METHODS.has(method) ? new BodyTap(req) : undefined;
  }

  emit(ev: AuditEvent, receivedAt: number): boolean {
    return this.sink.process(ev, receivedAt);
  }

  /**
   * The audit of an authenticated request: undefined when the policy does not record it. Emits
   * RequestReceived; the rest follows the response. Throws (500) in blocking-strict mode when the
   * event cannot be written.
   */
  begin(req: IncomingMessage, res: ServerResponse, scope: RequestScope, auditID: string, user: UserInfo, tap: BodyTap | undefined): RequestAudit | undefined {
    const config = this.evaluator.evaluate(attributes(scope.info, user));
    if (config.level === 'None') {
      tap?.stop();
      return undefined;
    }
    const ra = new RequestAudit(this, req, res, scope, auditID, user, config, tap);
    scope.auditAnnotations = ra.admissionAnnotations;
    if (!ra.emit('RequestReceived') && this.strict) throw new Error('failed to store audit event');
    return ra;
  }

  /** a request refused before it was authenticated: one ResponseStarted event, evaluated without a user */
  failed(req: IncomingMessage, scope: RequestScope, auditID: string, code: number, message: string): void {
    const config = this.evaluator.evaluate(attributes(scope.info, undefined));
    if (config.level === 'None' || config.omitStages.has('ResponseStarted')) return;
    const now = nowMicros();
    const ev: AuditEvent = {
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: config.level,
      auditID,
      stage: 'ResponseStarted',
      requestURI: req.url ?? '/',
      verb: scope.info.verb,
      user: {},
      sourceIPs: sourceIPs(req),
      userAgent: userAgentOf(req) || undefined,
      objectRef: objectRefOf(scope.info),
      responseStatus: { metadata: {}, message, code },
      requestReceivedTimestamp: microTime(scope.receivedAt),
      stageTimestamp: microTime(now),
    };
    this.emit(ev, scope.receivedAt);
  }

  shutdown(): void {
    this.sink.shutdown();
  }
}

/** one audited request: its event, completed as the request goes */
export class RequestAudit {
  private readonly annotations: Record<string, string> = {};
  /** what admission plugins annotate (the request's scope hands it to the write path) */
  readonly admissionAnnotations: Record<string, string> = {};
  private readonly user: AuditUserInfo;
  private impersonatedUser?: AuditUserInfo;
  private readonly ref?: AuditObjectReference;
  private readonly sourceIPs: string[];
  private readonly userAgent: string;
  private responseStatus?: AuditResponseStatus;
  private requestObject?: unknown;
  private responseObject?: unknown;
  private responseChunks?: Buffer[];
  private started = false;
  private done = false;
  private panicked = false;
  /** the request's body may be logged (it was authorized and accepted) */
  private bodyAccepted = false;

  constructor(
    private readonly auditor: Auditor,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly scope: RequestScope,
    private readonly auditID: string,
    user: UserInfo,
    readonly config: RequestAuditConfig,
    private readonly tap: BodyTap | undefined,
  ) {
    this.user = auditUser(user);
    this.ref = objectRefOf(scope.info);
    this.sourceIPs = sourceIPs(req);
    this.userAgent = userAgentOf(req);
    const self = this;
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: any[]) {
      self.code(typeof args[0] === 'number' ? args[0] : res.statusCode);
      return (writeHead as any).apply(this, args);
    } as any;
    if (levelRank(config.level) >= REQUEST_RESPONSE && !scope.longRunning) this.captureResponse();
    res.once('close', () => this.complete());
  }

  private captureResponse(): void {
    const res = this.res;
    const chunks: Buffer[] = [];
    this.responseChunks = chunks;
    const keep = (c: unknown, enc?: unknown) => {
      if (typeof c === 'string') chunks.push(Buffer.from(c, typeof enc === 'string' ? (enc as BufferEncoding) : 'utf8'));
      else if (c instanceof Uint8Array) chunks.push(Buffer.from(c.buffer, c.byteOffset, c.byteLength));
    };
    const write = res.write;
    const end = res.end;
    // HTTP/2's end(chunk) writes the chunk through write(): it is kept once
    let ending = false;
    res.write = function (this: ServerResponse, ...args: any[]) {
      if (!ending) keep(args[0], args[1]);
      return (write as any).apply(this, args);
    } as any;
    res.end = function (this: ServerResponse, ...args: any[]) {
      if (typeof args[0] !== 'function') keep(args[0], args[1]);
      ending = true;
      try {
        return (end as any).apply(this, args);
      } finally {
        ending = false;
      }
    } as any;
  }

  /** the status code, when the response starts */
  private code(code: number): void {
    if (this.started) return;
    this.started = true;
    if (!this.responseStatus) this.responseStatus = { metadata: {}, code };
    else this.responseStatus.code = code;
    if (this.scope.longRunning) this.emit('ResponseStarted');
  }

  annotate(key: string, value: string): void {
    if (!(key in this.annotations)) this.annotations[key] = value;
  }

  /** the authorization decision, as kube-apiserver's authorization filter annotates it */
  authorized(allowed: boolean, reason: string): void {
    this.annotate('authorization.k8s.io/decision', allowed ? 'allow' : 'forbid');
    this.annotate('authorization.k8s.io/reason', reason);
    this.bodyAccepted = allowed;
  }

  impersonated(user: UserInfo): void {
    this.impersonatedUser = auditUser(user);
  }

  /** the request was refused before its handler ran (in-flight limit): its body is not logged */
  refused(): void {
    this.bodyAccepted = false;
  }

  /** the Status of an error answer */
  error(se: StatusError): void {
    if (this.done) return;
    this.responseStatus = statusOf(se);
  }

  /** the deadline passed: the client got 504 */
  timedOut(status: { status: string; message: string; reason: string; details: unknown; code: number }): void {
    if (this.done) return;
    this.responseStatus = { metadata: {}, status: status.status, message: status.message, reason: status.reason, details: status.details, code: status.code };
    this.started = true;
  }

  /**
   * The request failed: a Status error is its responseStatus; a programming error (what a panic
   * is in Go) is the Panic stage; any other error is the 500 InternalError the client gets.
   */
  fail(err: unknown): void {
    if (err instanceof StatusError) this.error(err);
    else if (err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError || err instanceof SyntaxError) this.panic(err);
    else this.error(errors.internal(err));
  }

  /** the handler failed unexpectedly: the Panic stage (and no ResponseComplete) */
  panic(err: unknown): void {
    if (this.done || this.panicked) return;
    this.panicked = true;
    this.responseStatus = { metadata: {}, status: 'Failure', message: `APIServer panic'd: ${err instanceof Error ? err.message : String(err)}`, reason: 'InternalError', code: 500 };
    this.emit('Panic');
  }

  emit(stage: Stage): boolean {
    if (this.config.omitStages.has(stage)) return true;
    return this.auditor.emit(this.event(stage), this.scope.receivedAt);
  }

  private event(stage: Stage): AuditEvent {
    const ann = { ...this.admissionAnnotations, ...this.annotations };
    const ev = {
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: this.config.level,
      auditID: this.auditID,
      stage,
      requestURI: this.req.url ?? '/',
      verb: this.scope.info.verb,
      user: this.user,
    } as AuditEvent;
    if (this.impersonatedUser) ev.impersonatedUser = this.impersonatedUser;
    if (this.sourceIPs.length) ev.sourceIPs = this.sourceIPs;
    if (this.userAgent) ev.userAgent = this.userAgent;
    if (this.ref) ev.objectRef = orderedRef(this.ref);
    if (this.responseStatus) ev.responseStatus = this.responseStatus;
    if (this.requestObject !== undefined) ev.requestObject = this.requestObject;
    if (this.responseObject !== undefined) ev.responseObject = this.responseObject;
    ev.requestReceivedTimestamp = microTime(this.scope.receivedAt);
    ev.stageTimestamp = stage === 'RequestReceived' ? ev.requestReceivedTimestamp : microTime(nowMicros());
    const sorted = sortedMap(ann);
    if (sorted) ev.annotations = sorted;
    return ev;
  }

  /** the request's body: completes objectRef (create, update) and, at Request and above, is the requestObject */
  private logRequestBody(): void {
    const body = this.tap?.bytes();
    if (!this.bodyAccepted || !body || body.length === 0) return;
    const code = this.responseStatus?.code ?? 0;
    if (code === 413 || code === 429) return;
    const obj = parseDocument(body, this.req.headers['content-type']);
    if (obj === undefined) return;
    const verb = this.scope.info.verb;
    if ((verb === 'create' || verb === 'update') && this.ref && obj && typeof obj === 'object') {
      const m = (obj as any).metadata;
      if (m && typeof m === 'object') {
        for (const k of ['namespace', 'name', 'uid', 'resourceVersion'] as const) if (!this.ref[k] && typeof m[k] === 'string' && m[k]) this.ref[k] = m[k];
      }
    }
    if (levelRank(this.config.level) >= REQUEST) this.requestObject = this.config.omitManagedFields ? withoutManagedFields(obj) : obj;
  }

  private logResponseBody(): void {
    const chunks = this.responseChunks;
    if (!chunks?.length) return;
    let body = Buffer.concat(chunks);
    const enc = this.res.getHeader('content-encoding');
    try {
      if (enc === 'gzip') body = gunzipSync(body);
    } catch {
      return;
    }
    const ct = this.res.getHeader('content-type');
    const obj = parseDocument(body, typeof ct === 'string' ? ct : undefined);
    if (obj === undefined) return;
    // an error's Status is already the responseStatus
    if ((obj as any)?.kind === 'Status' && (this.responseStatus?.code ?? 200) >= 300) return;
    this.responseObject = this.config.omitManagedFields ? withoutManagedFields(obj) : obj;
  }

  private complete(): void {
    if (this.done) return;
    this.done = true;
    if (this.panicked) return;
    if (levelRank(this.config.level) >= METADATA) {
      try {
        this.logRequestBody();
        if (this.responseChunks) this.logResponseBody();
      } catch {
        /* the event goes out without the objects */
      }
    }
    this.tap?.stop();
    if (!this.responseStatus) {
      // no status was sent (the connection closed early): Kubernetes reports a success
      this.responseStatus = { metadata: {}, status: 'Success', message: 'Connection closed early', code: 200 };
      if (this.scope.longRunning && !this.started) this.emit('ResponseStarted');
    }
    this.emit('ResponseComplete');
  }
}

/** the message of a failed authentication's audit event: the credentials the request tried */
export function authenticationFailureMessage(req: IncomingMessage): string {
  const methods: string[] = [];
  const auth = (req.headers.authorization ?? '').trim();
  const parts = auth.split(' ');
  if (parts.length > 1 && parts[0]!.toLowerCase() === 'basic') methods.push('basic');
  if (parts.length > 1 && parts[0]!.toLowerCase() === 'bearer') methods.push('bearer');
  const q = (req.url ?? '').indexOf('?');
  if (q >= 0 && new URLSearchParams((req.url ?? '').slice(q + 1)).get('access_token')?.trim()) methods.push('access_token');
  const sock = req.socket as { getPeerCertificate?: () => { raw?: Buffer } };
  if (typeof sock.getPeerCertificate === 'function' && sock.getPeerCertificate()?.raw) methods.push('x509');
  return methods.length ? `Authentication failed, attempted: ${methods.join(', ')}` : 'Authentication failed, no credentials provided';
}
