// MutatingAdmissionWebhook and ValidatingAdmissionWebhook: the admissionregistration.k8s.io/v1
// webhook configurations (read through the ClusterReader) decide which requests are sent, as an
// AdmissionReview, over HTTPS to a webhook server; its answer admits, denies or (mutating) patches
// the object.
//
// - Selection: namespaceSelector (the labels of the request's namespace; of the namespace itself
//   for a namespace create or update), objectSelector (the new or the old object's labels), rules
//   (operations, apiGroups, apiVersions, resources with `res/sub`, `*/sub`, `res/*`, scope),
//   matchPolicy (Equivalent, the default: a rule that names another version of the request's
//   resource matches too, and the webhook gets the object in that version; see equivalent.ts),
//   matchConditions (CEL expressions, see cel.ts). Webhook configurations and admission
//   policies are never sent to webhooks.
// - Mutating webhooks run one after the other, in the order of their configurations' names and of
//   the webhooks in each; a JSONPatch response is applied to the object, which is then decoded
//   and defaulted again. reinvocationPolicy IfNeeded calls a webhook once more when a later
//   webhook changed the object. Validating webhooks run in parallel; the first refusal wins.
// - failurePolicy: a webhook that cannot be called (connection refused, TLS, timeoutSeconds
//   elapsed, a bad response) fails the request (Fail: 500 `failed calling webhook ...`) or is
//   skipped (Ignore). A denial is always a failure (`admission webhook "x" denied the request`).
// - Dry run: a dry-run request that would reach a webhook whose sideEffects is not None or
//   NoneOnDryRun fails with `admission webhook "x" does not support dry run` (400).
// - Warnings of the response are returned to the client; auditAnnotations become
//   `<webhook>/<key>` audit annotations.
//
// Where a webhook is reached: clientConfig.url as given; clientConfig.service (port 443 and path
// "/" by default) is addressed as https://<service>.<namespace>.svc:<port><path> (that name is
// the TLS server name the certificate must carry), and connected to one ready endpoint of the
// Service (its EndpointSlices, the target port of the Service port), as kube-apiserver does with
// --enable-aggregator-routing: Keelson has no service proxy, so a cluster IP routes nowhere.
import { parseJSON, stringifyJSON } from '../../codec/int64.js';
import https from 'node:https';
import { goDialError } from '../../machinery/goneterr.js';
import { isIP } from 'node:net';
import { randomUUID } from 'node:crypto';
import { errors, StatusError, type Status } from '../../machinery/errors.js';
import { fromLabelSelector, matchLabels, SelectorParseError, type Requirement } from '../../machinery/selectors.js';
import { applyJSONPatch } from '../../patch/jsonpatch.js';
import { PatchError } from '../../patch/errors.js';
import { normalize } from '../../codec/json.js';
import { applyDefaults } from '../../schema/defaults/index.js';
import { BUILTIN_KINDS } from '../../schema/kinds.js';
import type { EquivalentResolver, EquivalentView } from './equivalent.js';
import type { AdmissionAttributes, AdmissionPlugin, ClusterReader } from './types.js';
import { reinvocationContext, requireReinvokingPreviouslyInvoked } from './reinvocation.js';
import { asArray, isObject, labelsOf } from './util.js';
import { evaluateMatchConditions } from './cel.js';

// ---------------------------------------------------------------------------------------------
// errors

/** a failure to talk to a webhook (subject to failurePolicy) */
export class CallingWebhookError extends Error {
  constructor(
    readonly webhook: string,
    readonly reason: string,
  ) {
    super(`failed calling webhook "${webhook}": ${reason}`);
    this.name = 'CallingWebhookError';
  }
}

/** ToStatusErr: the webhook's Status with `admission webhook "x" denied the request` in front */
export function denialError(webhook: string, result: any): StatusError {
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const r: any = isObject(result) ? result : {};
  let code = typeof r.code === 'number' ? r.code : 0;
  if (code < 400) code = 400;
  let message: string;
  if (typeof r.message === 'string' && r.message) message = `${deniedBy}: ${r.message}`;
  else if (typeof r.reason === 'string' && r.reason) message = `${deniedBy}: ${r.reason}`;
  else message = `${deniedBy} without explanation`;
  const err = new StatusError(code, typeof r.reason === 'string' ? r.reason : '', message, isObject(r.details) ? r.details : undefined);
  return err;
}

export function dryRunUnsupported(webhook: string): StatusError {
  return errors.badRequest(`admission webhook "${webhook}" does not support dry run`);
}

// ---------------------------------------------------------------------------------------------
// configurations

export interface WebhookAccessor {
  /** `<configuration>/<webhook>/<n>` (n tells apart webhooks of one name in one configuration) */
  uid: string;
  configuration: string;
  hook: any;
}

/** the webhooks of the configurations of one kind, in Kubernetes' order (configurations by name) */
export function webhooksFrom(reader: ClusterReader, resource: 'mutatingwebhookconfigurations' | 'validatingwebhookconfigurations'): WebhookAccessor[] {
  const listed = reader.list('admissionregistration.k8s.io', resource, '');
  // asked on every write: most clusters have no webhook configurations at all
  if (listed.length === 0) return [];
  const configs = [...listed].sort((a, b) => {
    const x = a?.metadata?.name ?? '';
    const y = b?.metadata?.name ?? '';
    return x < y ? -1 : x > y ? 1 : 0;
  });
  const out: WebhookAccessor[] = [];
  for (const c of configs) {
    const name = c?.metadata?.name ?? '';
    const seen = new Map<string, number>();
    for (const h of asArray(c?.webhooks)) {
      if (!isObject(h)) continue;
      const n = seen.get(h.name) ?? 0;
      seen.set(h.name, n + 1);
      out.push({ uid: `${name}/${h.name}/${n}`, configuration: name, hook: h });
    }
  }
  return out;
}

const ADMISSION_CONFIG_KINDS = new Set([
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionPolicyBinding',
]);

/** requests on the admission configuration itself never reach webhooks (a broken webhook could lock it) */
export function isExemptAdmissionConfiguration(a: AdmissionAttributes): boolean {
  return a.kind.group === 'admissionregistration.k8s.io' && ADMISSION_CONFIG_KINDS.has(a.kind.kind);
}

// ---------------------------------------------------------------------------------------------
// matching

function exactOrWildcard(items: unknown, requested: string): boolean {
  return asArray<string>(items).some((i) => i === '*' || i === requested);
}

/** one RuleWithOperations against a request */
export function ruleMatches(rule: any, a: Pick<AdmissionAttributes, 'operation' | 'resource' | 'subresource' | 'namespace'>): boolean {
  if (!isObject(rule)) return false;
  const isNamespaceResource = a.resource.group === '' && a.resource.version === 'v1' && a.resource.resource === 'namespaces';
  const scope = rule.scope ?? '*';
  if (scope === 'Namespaced') {
    if (isNamespaceResource || a.namespace === '') return false;
  } else if (scope === 'Cluster') {
    if (!(isNamespaceResource || a.namespace === '')) return false;
  } else if (scope !== '*') return false;
  if (!asArray<string>(rule.operations).some((op) => op === '*' || op === a.operation)) return false;
  if (!exactOrWildcard(rule.apiGroups, a.resource.group)) return false;
  if (!exactOrWildcard(rule.apiVersions, a.resource.version)) return false;
  for (const r of asArray<string>(rule.resources)) {
    const slash = r.indexOf('/');
    const res = slash < 0 ? r : r.slice(0, slash);
    const sub = slash < 0 ? '' : r.slice(slash + 1);
    if ((res === '*' || res === a.resource.resource) && (sub === '*' || sub === a.subresource)) return true;
  }
  return false;
}

function parseSelector(sel: unknown): Requirement[] {
  try {
    return fromLabelSelector(isObject(sel) ? sel : {}) ?? [];
  } catch (e) {
    if (e instanceof SelectorParseError) throw errors.internal(e);
    throw e;
  }
}

/** the namespaceSelector: true, false, or a StatusError (the namespace does not exist) */
export function matchNamespaceSelector(reader: ClusterReader, hook: any, a: AdmissionAttributes): boolean | StatusError {
  if (a.namespace === '' && a.resource.resource !== 'namespaces') return true;
  let reqs: Requirement[];
  try {
    reqs = parseSelector(hook.namespaceSelector);
  } catch (e) {
    return e as StatusError;
  }
  if (reqs.length === 0) return true;
  let labels: Record<string, string>;
  if (a.resource.resource === 'namespaces' && a.resource.group === '' && a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE')) {
    labels = labelsOf(a.object);
  } else {
    const ns = reader.get('', 'namespaces', '', a.namespace);
    if (!ns) return errors.notFound({ group: '', name: 'namespaces' }, a.namespace);
    labels = labelsOf(ns);
  }
  return matchLabels(reqs, labels);
}

export function matchObjectSelector(hook: any, a: AdmissionAttributes): boolean | StatusError {
  let reqs: Requirement[];
  try {
    reqs = parseSelector(hook.objectSelector);
  } catch (e) {
    return e as StatusError;
  }
  if (reqs.length === 0) return true;
  const m = (o: any) => isObject(o) && matchLabels(reqs, labelsOf(o));
  return m(a.object) || m(a.oldObject);
}

export interface Invocation {
  accessor: WebhookAccessor;
  resource: AdmissionAttributes['resource'];
  subresource: string;
  kind: AdmissionAttributes['kind'];
  /** the version a rule matched when it is not the request's own (matchPolicy Equivalent) */
  view?: EquivalentView;
}

/**
 * The version of the request's resource that `matches` accepts: undefined for the request's own,
 * an equivalent one (matchPolicy Equivalent: tried when the request's own is not matched),
 * or false when none is
 */
export function matchingVersion(
  a: AdmissionAttributes,
  matchPolicy: unknown,
  equivalents: EquivalentResolver | undefined,
  matches: (at: AdmissionAttributes) => boolean,
): EquivalentView | undefined | false {
  if (matches(a)) return undefined;
  if (matchPolicy === 'Exact' || !equivalents) return false;
  for (const v of equivalents(a)) if (matches({ ...a, resource: v.resource, kind: v.kind })) return v;
  return false;
}

/**
 * The attributes as a webhook or policy that matched `view` sees them: the object and the old
 * object in that version (the request's kind and resource stay: they are requestKind and
 * requestResource). The request's own attributes when there is no view.
 */
export function versionedAttributes(a: AdmissionAttributes, view: EquivalentView | undefined): AdmissionAttributes {
  if (!view) return a;
  return { ...a, object: view.convert(a.object), oldObject: view.convert(a.oldObject) };
}

/**
 * The invocation of a webhook when it applies to the request (Kubernetes' ShouldCallHook), undefined
 * when not. The objects of an equivalent version that a CRD's conversion webhook converts are made
 * ready before the matchConditions, which see them converted.
 */
export async function invocationOf(reader: ClusterReader, accessor: WebhookAccessor, a: AdmissionAttributes, equivalents?: EquivalentResolver): Promise<Invocation | undefined> {
  const inv = matchingInvocation(reader, accessor, a, equivalents);
  if (inv?.view?.prepare) await inv.view.prepare([a.object, a.oldObject]);
  return inv && conditionsHold(accessor.hook, a, inv) ? inv : undefined;
}

/** the invocation when the webhook's selectors and rules match the request (its matchConditions not asked yet) */
function matchingInvocation(reader: ClusterReader, accessor: WebhookAccessor, a: AdmissionAttributes, equivalents?: EquivalentResolver): Invocation | undefined {
  const hook = accessor.hook;
  const ns = matchNamespaceSelector(reader, hook, a);
  if (ns === false) return undefined;
  const obj = matchObjectSelector(hook, a);
  if (obj === false) return undefined;
  const rules = asArray(hook.rules);
  const view = matchingVersion(a, hook.matchPolicy, equivalents, (at) => rules.some((r) => ruleMatches(r, at)));
  if (view === false) return undefined;
  if (ns instanceof StatusError) throw ns;
  if (obj instanceof StatusError) throw obj;
  if (view) return { accessor, resource: view.resource, subresource: a.subresource, kind: view.kind, view };
  return { accessor, resource: a.resource, subresource: a.subresource, kind: a.kind };
}

/** the webhook's matchConditions over the objects in the invocation's version (an error fails the request under failurePolicy Fail) */
function conditionsHold(hook: any, a: AdmissionAttributes, inv: Invocation): boolean {
  const conditions = asArray(hook.matchConditions);
  if (!conditions.length) return true;
  const r = evaluateMatchConditions(conditions, versionedAttributes(a, inv.view));
  if (r.error !== undefined) {
    if ((hook.failurePolicy ?? 'Fail') === 'Fail') throw errors.forbidden({ group: a.resource.group, name: a.resource.resource }, a.name, r.error);
    return false;
  }
  return r.matches;
}

// ---------------------------------------------------------------------------------------------
// the AdmissionReview

const OPTIONS_KIND: Record<string, string> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions', CONNECT: '' };

function optionsObject(a: AdmissionAttributes): any {
  const o = a.options;
  if (!isObject(o)) return null;
  if (o.kind && o.apiVersion) return o;
  const kind = OPTIONS_KIND[a.operation];
  if (!kind) return o;
  return { kind, apiVersion: 'meta.k8s.io/v1', ...o };
}

export function admissionRequest(uid: string, inv: Invocation, a: AdmissionAttributes): any {
  const user: any = { username: a.user?.name ?? '' };
  if (a.user?.uid) user.uid = a.user.uid;
  if (a.user?.groups?.length) user.groups = a.user.groups;
  if (a.user?.extra && Object.keys(a.user.extra).length) user.extra = a.user.extra;
  const req: any = {
    uid,
    kind: { group: inv.kind.group, version: inv.kind.version, kind: inv.kind.kind },
    resource: { group: inv.resource.group, version: inv.resource.version, resource: inv.resource.resource },
  };
  if (inv.subresource) req.subResource = inv.subresource;
  req.requestKind = { group: a.kind.group, version: a.kind.version, kind: a.kind.kind };
  req.requestResource = { group: a.resource.group, version: a.resource.version, resource: a.resource.resource };
  if (a.subresource) req.requestSubResource = a.subresource;
  if (a.name) req.name = a.name;
  if (a.namespace) req.namespace = a.namespace;
  req.operation = a.operation;
  req.userInfo = user;
  req.object = a.object ?? null;
  req.oldObject = a.oldObject ?? null;
  req.dryRun = a.dryRun;
  req.options = optionsObject(a);
  return req;
}

export interface AdmissionResult {
  allowed: boolean;
  patch?: unknown;
  patchType?: string;
  result?: any;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** VerifyAdmissionResponse: the response checked as Kubernetes checks it; throws its words */
export function verifyResponse(uid: string, mutating: boolean, version: 'v1' | 'v1beta1', review: any): AdmissionResult {
  if (!isObject(review)) throw new Error(`webhook response was absent`);
  const r = review.response;
  if (!isObject(r)) throw new Error('webhook response was absent');
  const warnings = asArray(r.warnings).map(String);
  const auditAnnotations: Record<string, string> = isObject(r.auditAnnotations) ? (r.auditAnnotations as Record<string, string>) : {};
  if (version === 'v1') {
    if (r.uid !== uid) throw new Error(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(r.uid ?? '')}`);
    if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview') {
      throw new Error(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${review.apiVersion ?? ''}, Kind=${review.kind ?? ''}`);
    }
  }
  const hasPatch = typeof r.patch === 'string' && r.patch.length > 0;
  const hasType = r.patchType !== undefined && r.patchType !== null;
  let patch: unknown;
  let patchType: string | undefined;
  if (mutating) {
    if (version === 'v1') {
      if (hasPatch && !hasType) throw new Error('webhook returned response.patch but not response.patchType');
      if (!hasPatch && hasType) throw new Error('webhook returned response.patchType but not response.patch');
      if (hasType && r.patchType === '') throw new Error(`webhook returned invalid response.patchType of ""`);
      patchType = hasType ? String(r.patchType) : undefined;
    } else if (hasPatch) patchType = 'JSONPatch';
    if (hasPatch) patch = r.patch;
  } else if (version === 'v1') {
    if (hasPatch) throw new Error('validating webhook may not return response.patch');
    if (hasType) throw new Error('validating webhook may not return response.patchType');
  }
  // (AdmissionResponse.Result is `json:"status"` on the wire)
  return { allowed: r.allowed === true, patch, patchType, result: r.status, warnings, auditAnnotations };
}

// ---------------------------------------------------------------------------------------------
// the HTTPS call

export interface ResolvedEndpoint {
  host: string;
  port: number;
}

/** where a service reference connects; throws an Error whose message Kubernetes would show */
export type ServiceResolver = (namespace: string, name: string, port: number) => ResolvedEndpoint;

/** endpoint routing: a ready address of the Service's EndpointSlices, on the Service port's target port */
export function endpointServiceResolver(reader: ClusterReader): ServiceResolver {
  return (namespace, name, port) => {
    const svc = reader.get('', 'services', namespace, name);
    if (!svc) throw new Error(`service "${name}" not found`);
    const type = svc.spec?.type ?? 'ClusterIP';
    if (type !== 'ClusterIP' && type !== 'LoadBalancer' && type !== 'NodePort') throw new Error(`unsupported service type "${type}"`);
    const svcPort = asArray(svc.spec?.ports).find((p) => p?.port === port);
    if (!svcPort) throw new Error(`no service port ${port} found for service "${name}"`);
    const portName = svcPort.name ?? '';
    const slices = reader.list('discovery.k8s.io', 'endpointslices', namespace).filter((s) => s?.metadata?.labels?.['kubernetes.io/service-name'] === name);
    for (const slice of slices) {
      for (const p of asArray(slice.ports)) {
        if ((p?.name ?? '') !== portName || typeof p?.port !== 'number') continue;
        const eps = asArray(slice.endpoints);
        if (!eps.length) continue;
        const offset = Math.floor(Math.random() * eps.length);
        for (let i = 0; i < eps.length; i++) {
          const ep = eps[(i + offset) % eps.length];
          if (ep?.conditions?.ready === false) continue;
          const ip = asArray<string>(ep?.addresses)[0];
          if (ip) return { host: ip, port: p.port };
        }
      }
    }
    throw new Error(`no endpoints available for service "${name}"`);
  };
}

interface Target {
  /** the URL as Kubernetes shows it in errors (with ?timeout=) */
  url: string;
  connectHost: string;
  connectPort: number;
  path: string;
  servername?: string;
  hostHeader: string;
}

function target(clientConfig: unknown, resolver: ServiceResolver, timeoutSeconds: number | undefined): Target {
  const cc: any = isObject(clientConfig) ? clientConfig : {};
  // (admission asks with ?timeout=; a conversion request has no timeout of its own in the URL)
  const q = timeoutSeconds === undefined ? '' : `?timeout=${timeoutSeconds}s`;
  if (typeof cc.url === 'string' && cc.url) {
    const u = new URL(cc.url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const port = u.port ? Number(u.port) : 443;
    const path = (u.pathname || '/') + q;
    return {
      url: `${u.protocol}//${u.host}${u.pathname}${q}`,
      connectHost: host,
      connectPort: port,
      path,
      servername: isIP(host) ? undefined : host,
      hostHeader: u.host,
    };
  }
  const svc = isObject(cc.service) ? cc.service : {};
  const port = typeof svc.port === 'number' ? svc.port : 443;
  const serverName = `${svc.name}.${svc.namespace}.svc`;
  const path = (typeof svc.path === 'string' && svc.path ? svc.path : '/') + q;
  const url = `https://${serverName}:${port}${path}`;
  let ep: ResolvedEndpoint;
  try {
    ep = resolver(svc.namespace ?? '', svc.name ?? '', port);
  } catch (e) {
    throw new WebhookCallError(`Post ${JSON.stringify(url)}: ${(e as Error).message}`);
  }
  return { url, connectHost: ep.host, connectPort: ep.port, path, servername: serverName, hostHeader: `${serverName}:${port}` };
}

/** Go's words for a failed connection (a reset reads as EOF in client-go's webhook client) */
function goNetError(e: any, t: Target): string {
  if (e?.code === 'ECONNRESET') return 'EOF';
  return goDialError(e, { host: t.connectHost, port: t.connectPort }) ?? e?.message ?? String(e);
}

/** client-go's error for a non-2xx answer */
function httpError(status: number, body: string): string {
  try {
    const s = JSON.parse(body);
    if (isObject(s) && s.kind === 'Status' && typeof s.message === 'string') return s.message;
  } catch {
    /* not a Status */
  }
  const text = body.length > 1024 ? body.slice(0, 1024) : body;
  switch (status) {
    case 400:
      return 'the server rejected our request for an unknown reason';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'the server could not find the requested resource';
    case 409:
      return 'the server reported a conflict';
    case 422:
      return 'the server rejected our request due to an error in our request';
    case 500:
      return text ? `an error on the server (${JSON.stringify(text)}) has prevented the request from succeeding` : 'an error on the server has prevented the request from succeeding';
    case 503:
      return 'the server is currently unable to handle the request';
    case 504:
      return 'the server was unable to return a response in the time allotted, but may still be processing the request';
    default:
      return `the server responded with the status code ${status} but did not return more information`;
  }
}

/** a webhook call that failed: `message` is client-go's words (`Post "url": ...`, an answer's status, an undecodable body) */
export class WebhookCallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookCallError';
  }
}

export interface WebhookPost {
  /** the webhook's clientConfig: url, or service (namespace, name, path, port), and caBundle */
  clientConfig: unknown;
  /** how long the call may take; with admission's ?timeout= in the URL, or without it (`inURL` false) */
  timeoutSeconds: number;
  timeoutInURL: boolean;
  userAgent: string;
}

/**
 * POSTs a JSON body to a webhook over HTTPS and resolves with its decoded JSON answer; rejects
 * with a WebhookCallError worded as client-go words the failure. Shared by admission webhooks and
 * CRD conversion webhooks.
 */
export async function postWebhook(o: WebhookPost, body: string, resolver: ServiceResolver): Promise<any> {
  const { timeoutSeconds } = o;
  const t = target(o.clientConfig, resolver, o.timeoutInURL ? timeoutSeconds : undefined);
  const cc: any = isObject(o.clientConfig) ? o.clientConfig : {};
  const ca = typeof cc.caBundle === 'string' && cc.caBundle ? Buffer.from(cc.caBundle, 'base64') : undefined;
  const fail = (reason: string) => new WebhookCallError(`Post ${JSON.stringify(t.url)}: ${reason}`);
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (f: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      f();
    };
    const req = https.request(
      {
        host: t.connectHost,
        port: t.connectPort,
        method: 'POST',
        path: t.path,
        servername: t.servername,
        ca,
        headers: {
          host: t.hostHeader,
          'content-type': 'application/json',
          accept: 'application/json, */*',
          'user-agent': o.userAgent,
          'content-length': Buffer.byteLength(body),
        },
        agent: false,
        minVersion: 'TLSv1.2',
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('error', (e) => finish(() => reject(fail(goNetError(e, t)))));
        res.on('end', () =>
          finish(() => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status < 200 || status > 299) return reject(new WebhookCallError(httpError(status, text)));
            try {
              resolve(parseJSON(text));
            } catch (e) {
              reject(new WebhookCallError(`couldn't get version/kind; json parse error: ${(e as Error).message}`));
            }
          }),
        );
      },
    );
    const timer = setTimeout(() => {
      finish(() => reject(fail('context deadline exceeded')));
      req.destroy();
    }, timeoutSeconds * 1000);
    req.on('error', (e) => finish(() => reject(fail(goNetError(e, t)))));
    req.end(body);
  });
}

async function post(hook: any, body: string, resolver: ServiceResolver): Promise<any> {
  const timeoutSeconds = typeof hook.timeoutSeconds === 'number' ? hook.timeoutSeconds : 10;
  try {
    return await postWebhook({ clientConfig: hook.clientConfig, timeoutSeconds, timeoutInURL: true, userAgent: 'kube-apiserver-admission' }, body, resolver);
  } catch (e) {
    if (e instanceof WebhookCallError) throw new CallingWebhookError(hook.name, `failed to call webhook: ${e.message}`);
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// the plugins

export interface WebhookPluginOptions {
  /** where service references connect (default: endpoint routing through the reader) */
  resolveService?: ServiceResolver;
  log?: { warn(msg: string, kv?: Record<string, unknown>): void };
  /** the other versions of a request's resource, for matchPolicy Equivalent (none without it) */
  equivalents?: EquivalentResolver;
}

function annotate(a: AdmissionAttributes, key: string, value: string): void {
  a.auditAnnotations ??= {};
  a.auditAnnotations[key] = value;
}

function addWarnings(a: AdmissionAttributes, ws: string[]): void {
  if (!ws.length) return;
  a.warnings ??= [];
  for (const w of ws) if (!a.warnings.includes(w)) a.warnings.push(w);
}

function reviewVersion(hook: any): 'v1' | 'v1beta1' | undefined {
  for (const v of asArray<string>(hook.admissionReviewVersions)) if (v === 'v1' || v === 'v1beta1') return v;
  return undefined;
}

/** the dry-run rule, before anything is sent */
function checkDryRun(hook: any, a: AdmissionAttributes): void {
  if (!a.dryRun) return;
  const se = hook.sideEffects;
  if (se === undefined || se === null) throw new CallingWebhookError(hook.name, 'Webhook SideEffects is nil');
  if (se !== 'None' && se !== 'NoneOnDryRun') throw dryRunUnsupported(hook.name);
}

async function callHook(hook: any, inv: Invocation, a: AdmissionAttributes, mutating: boolean, resolver: ServiceResolver): Promise<AdmissionResult> {
  const version = reviewVersion(hook);
  if (!version) throw new CallingWebhookError(hook.name, 'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)');
  const uid = randomUUID();
  const review = { kind: 'AdmissionReview', apiVersion: `admission.k8s.io/${version}`, request: admissionRequest(uid, inv, versionedAttributes(a, inv.view)) };
  const response = await post(hook, stringifyJSON(review), resolver);
  let result: AdmissionResult;
  try {
    result = verifyResponse(uid, mutating, version, response);
  } catch (e) {
    throw new CallingWebhookError(hook.name, `received invalid webhook response: ${(e as Error).message}`);
  }
  for (const [k, v] of Object.entries(result.auditAnnotations)) annotate(a, `${hook.name}/${k}`, String(v));
  addWarnings(a, result.warnings);
  if (!result.allowed) throw denialError(hook.name, result.result);
  return result;
}

/** the type name of a kind's object (to decode a patched object as Kubernetes decodes it) */
function typeOfKind(kind: AdmissionAttributes['kind']): string | undefined {
  return BUILTIN_KINDS.find((k) => k.group === kind.group && k.version === kind.version && k.kind === kind.kind)?.type;
}

/** replace the contents of `target` with those of `source` (the caller keeps its reference) */
function replaceContents(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const k of Object.keys(target)) delete target[k];
  Object.assign(target, source);
}

function stableJSON(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (isObject(x) ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, x[k]])) : typeof x === 'bigint' ? `${x}n` : x));
}

/** apply a webhook's patch to the request's object; returns whether the object changed */
async function applyPatch(hook: any, inv: Invocation, a: AdmissionAttributes, result: AdmissionResult): Promise<{ changed: boolean; patch?: unknown }> {
  if (result.patch === undefined) return { changed: false };
  let ops: unknown;
  try {
    ops = parseJSON(Buffer.from(String(result.patch), 'base64').toString('utf8'));
    if (ops !== null && !Array.isArray(ops)) throw new Error(`json: cannot unmarshal ${typeof ops === 'object' ? 'object' : typeof ops} into Go value of type jsonpatch.Patch`);
  } catch (e) {
    throw new CallingWebhookError(hook.name, `received undecodable patch in webhook response: ${(e as Error).message}`);
  }
  if (!Array.isArray(ops) || ops.length === 0) return { changed: false };
  if (!isObject(a.object)) throw errors.internal(new Error(`admission webhook ${JSON.stringify(hook.name)} attempted to modify the object, which is not supported for this operation`));
  if (result.patchType !== 'JSONPatch') throw new CallingWebhookError(hook.name, `unsupported patch type ${JSON.stringify(result.patchType ?? '')}`);
  // the patch was made against the object in the invocation's version (see equivalent.ts)
  const view = inv.view;
  const before = view ? view.convert(a.object) : a.object;
  let patched: any;
  try {
    patched = applyJSONPatch(before, ops, { fieldValidation: 'Ignore' });
  } catch (e) {
    if (e instanceof PatchError) throw errors.internal(new Error(e.detail));
    throw errors.internal(e);
  }
  if (!isObject(patched)) throw errors.internal(new Error(`json: cannot unmarshal ${Array.isArray(patched) ? 'array' : typeof patched} into Go value of type ${inv.kind.kind}`));
  const type = typeOfKind(inv.kind);
  if (type) {
    const n = normalize(type, patched);
    if (n.typeError) throw errors.internal(new Error(n.typeError));
    patched = n.obj;
    applyDefaults(inv.kind.group, inv.kind.version, inv.kind.kind, patched);
  }
  const changed = stableJSON(patched) !== stableJSON(before);
  // (an object back from another version only when the webhook changed it: a round trip
  // between versions need not give the same object back)
  if (!view) replaceContents(a.object, patched);
  else if (changed) replaceContents(a.object, view.backAsync ? await view.backAsync(patched) : view.back(patched));
  return { changed, patch: ops };
}

export function mutatingWebhooks(reader: ClusterReader, opts: WebhookPluginOptions = {}): AdmissionPlugin {
  const resolver = opts.resolveService ?? endpointServiceResolver(reader);
  const callMutating = async (a: AdmissionAttributes, hooks: WebhookAccessor[]): Promise<void> => {
    const ctx = reinvocationContext(a);
    const w = ctx.webhooks;
    if (ctx.isReinvoke && w.lastOutput !== undefined && w.lastOutput !== stableJSON(a.object)) {
      // built-in plugins changed the object since the last webhook: all eligible webhooks again
      requireReinvokingPreviouslyInvoked(w);
    }
    try {
      for (let i = 0; i < hooks.length; i++) {
        const acc = hooks[i]!;
        const inv = await invocationOf(reader, acc, a, opts.equivalents);
        if (!inv) continue;
        const hook = acc.hook;
        if (ctx.isReinvoke && !w.reinvoke.has(acc.uid)) continue;
        const round = ctx.isReinvoke ? 1 : 0;
        let changed = false;
        let err: unknown;
        try {
          checkDryRun(hook, a);
          const started = performance.now();
          let result: AdmissionResult;
          try {
            result = await callHook(hook, inv, a, true, resolver);
          } finally {
            if (a.latency) a.latency.webhookMs += performance.now() - started;
          }
          const p = await applyPatch(hook, inv, a, result);
          changed = p.changed;
          if (p.patch !== undefined) {
            annotate(a, `patch.webhook.admission.k8s.io/round_${round}_index_${i}`, stringifyJSON({ configuration: acc.configuration, webhook: hook.name, patch: p.patch, patchType: 'JSONPatch' }));
          }
        } catch (e) {
          err = e;
        } finally {
          annotate(a, `mutation.webhook.admission.k8s.io/round_${round}_index_${i}`, JSON.stringify({ configuration: acc.configuration, webhook: hook.name, mutated: changed }));
        }
        if (changed) {
          requireReinvokingPreviouslyInvoked(w);
          ctx.shouldReinvoke = true;
        }
        if (hook.reinvocationPolicy === 'IfNeeded') w.previouslyInvoked.add(acc.uid);
        if (err === undefined) continue;
        if (err instanceof CallingWebhookError) {
          if ((hook.failurePolicy ?? 'Fail') === 'Ignore') {
            opts.log?.warn('Failed calling webhook, failing open', { webhook: hook.name, err: err.message });
            annotate(a, `failed-open.mutation.webhook.admission.k8s.io/round_${round}_index_${i}`, hook.name);
            continue;
          }
          opts.log?.warn('Failed calling webhook, failing closed', { webhook: hook.name, err: err.message });
          throw errors.internal(err);
        }
        throw err;
      }
    } finally {
      w.lastOutput = stableJSON(a.object);
    }
  };
  return {
    name: 'MutatingAdmissionWebhook',
    // synchronous (no promise) when no mutating webhook is configured
    mutate(a) {
      if (isExemptAdmissionConfiguration(a)) return;
      const hooks = webhooksFrom(reader, 'mutatingwebhookconfigurations');
      if (!hooks.length) return;
      return callMutating(a, hooks);
    },
  };
}

export function validatingWebhooks(reader: ClusterReader, opts: WebhookPluginOptions = {}): AdmissionPlugin {
  const resolver = opts.resolveService ?? endpointServiceResolver(reader);
  const callValidating = async (a: AdmissionAttributes, hooks: WebhookAccessor[]): Promise<void> => {
    const relevant: { inv: Invocation; index: number }[] = [];
    for (const acc of hooks) {
      const inv = await invocationOf(reader, acc, a, opts.equivalents);
      if (inv) relevant.push({ inv, index: relevant.length });
    }
    if (!relevant.length) return;
    const errs: unknown[] = [];
    // the validating webhooks run side by side: their time is the wall time of all of them
    const started = performance.now();
    await Promise.all(
      relevant.map(async ({ inv, index }) => {
        const hook = inv.accessor.hook;
        try {
          checkDryRun(hook, a);
          await callHook(hook, inv, a, false, resolver);
        } catch (e) {
          if (e instanceof CallingWebhookError) {
            if ((hook.failurePolicy ?? 'Fail') === 'Ignore') {
              opts.log?.warn('Failed calling webhook, failing open', { webhook: hook.name, err: e.message });
              annotate(a, `failed-open.validating.webhook.admission.k8s.io/round_0_index_${index}`, hook.name);
              return;
            }
            opts.log?.warn('Failed calling webhook, failing closed', { webhook: hook.name, err: e.message });
            errs.push(errors.internal(e));
            return;
          }
          errs.push(e);
        }
      }),
    );
    if (a.latency) a.latency.webhookMs += performance.now() - started;
    if (errs.length) throw errs[0];
  };
  return {
    name: 'ValidatingAdmissionWebhook',
    // synchronous (no promise) when no validating webhook is configured
    validate(a) {
      if (isExemptAdmissionConfiguration(a)) return;
      const hooks = webhooksFrom(reader, 'validatingwebhookconfigurations');
      if (!hooks.length) return;
      return callValidating(a, hooks);
    },
  };
}

export type { Status };
