// The subresources of a Pod that reach into its node: log (GET), and exec, attach and portforward
// (GET, as a WebSocket upgrade, or POST, as a SPDY upgrade), as kube-apiserver's pod registry
// serves them.
//
// kube-apiserver parses the request's options (a malformed number is a 400), validates them (log:
// 422 PodLogOptions), runs admission for exec, attach and portforward (operation CONNECT, the
// options as the object), looks the pod up (404), checks the container (400: a pod of several
// containers needs one named, and a named one must be the pod's), and then:
// - a pod not yet on a node: log answers 204 No Content (kubectl prints nothing), the others 400
//   "pod <name> does not have a host assigned";
// - a pod on a node: the Node is looked up (404 when it is gone), its address is the first of its
//   status.addresses by --kubelet-preferred-address-types (500 when none matches), and the port its
//   kubelet's (status.daemonEndpoints.kubeletEndpoint.Port, else 10250).
//
// log then connects to that kubelet, as kube-apiserver's LogLocation and LocationStreamer do: a GET
// of https://<address>:<port>/containerLogs/<namespace>/<pod>/<container> with the options in the
// query (follow, limitBytes, previous, sinceSeconds, sinceTime (RFC 3339, in seconds), tailLines,
// timestamps; sorted, as url.Values encodes them), presenting --kubelet-client-certificate and
// verifying the kubelet's certificate with --kubelet-certificate-authority (without it, or with
// insecureSkipTLSVerifyBackend, it is not verified, as kube-apiserver's kubelet transport does).
// --kubelet-timeout bounds the connection and its TLS handshake (not the stream: a followed log
// lasts as long as the client reads it). The kubelet's answer:
// - 2xx: streamed back as it comes, Content-Type text/plain, chunked, each piece written (flushed)
//   when it arrives, until the kubelet ends it; the client going away ends the kubelet's request;
// - any other status: its body (up to 50,000 bytes) becomes the error, as
//   GenericHttpResponseChecker words it: 500 InternalError "Internal error occurred: <body>", 400
//   BadRequest "<body>", others by their code (404 NotFound "the server could not find the
//   requested resource ( pods/log <name>)", 403 Forbidden "<body> ( pods/log <name>)", ...);
// - no answer (refused, unreachable, TLS): 500, no reason, `Get "<url>": <Go's words for the error>`
//   (`dial tcp 10.0.0.1:10250: connect: connection refused`), as kube-apiserver answers an error
//   that is not a Status.
//
// exec, attach and portforward stop short of the kubelet: once the request has come that far it
// is answered 503 ServiceUnavailable, naming the node and the kubelet address it would have used
// (Keelson does not proxy streaming upgrades to kubelets yet).
//
// The proxy subresources of pods, services and nodes (any method kube-apiserver proxies, the rest
// of the path after `proxy/` the path to proxy to) are resolved the same way, as kube-apiserver
// resolves their location: the name may carry a port and a scheme (`https:web:8443`; 400 when it
// cannot be split), admission CONNECT with the Pod-, Service- or NodeProxyOptions, then a pod's
// IP (400 "address not allowed" unless a global unicast address), a service's port and an address
// of its Endpoints (503 "no endpoints available"), a node's kubelet; and then 503, as this server
// does not proxy yet.
import { errors, field, StatusError, type FieldError } from '../machinery/errors.js';
import { admissionOf, methodNotAllowed, type Request } from './handlers.js';
import { admissionAttributes } from './admission/wiring.js';
import { queryBool } from './requestinfo.js';
import { normTime, timeParseMessage } from '../codec/json.js';
import { isGlobalUnicastIP } from '../schema/validation/util.js';
import { joinHostPort } from '../schema/printers/format.js';
import type { ResourceStore } from './registry/store.js';
import { goQuote } from '../machinery/gostrings.js';
import { goDialError } from '../machinery/goneterr.js';
import https from 'node:https';
import { isIP } from 'node:net';
import type { ClientRequest, IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

/** the Pod subresources served here (and `proxy` of pods, services and nodes: handleProxy) */
export const POD_CONNECT_SUBRESOURCES: ReadonlySet<string> = new Set(['log', 'exec', 'attach', 'portforward']);

/** the core kinds whose `proxy` subresource is served by handleProxy */
export const PROXY_KINDS: ReadonlySet<string> = new Set(['Pod', 'Service', 'Node']);

/** what a connect request needs besides its own store */
export interface ConnectContext {
  nodes: ResourceStore;
  /** the Endpoints of services, for services/proxy */
  endpoints: ResourceStore;
  /** how the server connects to kubelets (kube-apiserver's defaults when absent: no client certificate, the kubelet's certificate not verified) */
  kubelet?: KubeletClientConfig;
}

/** kube-apiserver's kubelet client flags, loaded */
export interface KubeletClientConfig {
  /** --kubelet-client-certificate and --kubelet-client-key, their contents */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** --kubelet-certificate-authority, its contents; absent: the kubelet's serving certificate is not verified */
  ca?: string | Buffer;
  /** --kubelet-preferred-address-types */
  preferredAddressTypes: string[];
  /** --kubelet-timeout, in ms: the connection and its TLS handshake */
  timeoutMs: number;
}

/** kube-apiserver's default --kubelet-preferred-address-types */
export const PREFERRED_ADDRESS_TYPES: readonly string[] = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];
/** kube-apiserver's default --kubelet-timeout */
export const DEFAULT_KUBELET_TIMEOUT_MS = 5000;
/** kube-apiserver's default kubelet port, for a node that reports none */
const DEFAULT_KUBELET_PORT = 10250;

export async function handlePodConnect(r: Request, ctx: ConnectContext): Promise<void> {
  const { info, query } = r;
  const sub = info.subresource;
  const method = r.req.method;
  r.req.resume();
  if (sub === 'log') {
    if (method !== 'GET') throw methodNotAllowed();
    const opts = podLogOptions(query);
    const errs = validatePodLogOptions(opts);
    if (errs.length) throw errors.invalid({ group: '', name: 'PodLogOptions' }, info.name, errs);
    const pod = r.store.mustGet(info.namespace, info.name).obj;
    const container = validateContainer(pod, opts.container);
    // (kube-apiserver's log location is empty for a pod on no node: its streamer has nothing to send)
    if (!pod.spec?.nodeName) {
      r.res.statusCode = 204;
      r.res.end();
      return;
    }
    const k = kubeletOf(ctx, pod.spec.nodeName);
    return streamLog(r, ctx.kubelet, k, pod, container, opts);
  }
  if (method !== 'GET' && method !== 'POST') throw methodNotAllowed();
  const opts = sub === 'portforward' ? podPortForwardOptions(query) : streamOptions(query, sub === 'exec');
  await admitConnect(r, opts);
  const pod = r.store.mustGet(info.namespace, info.name).obj;
  if (sub !== 'portforward') validateContainer(pod, opts.container as string | undefined);
  if (!pod.spec?.nodeName) throw errors.badRequest(`pod ${info.name} does not have a host assigned`);
  throw notConnected(kubeletOf(ctx, pod.spec.nodeName), sub, pod.metadata.name);
}

/** the methods kube-apiserver proxies */
const PROXY_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/** pods/proxy, services/proxy and nodes/proxy (see the head of this file) */
export async function handleProxy(r: Request, ctx: ConnectContext): Promise<void> {
  const { info } = r;
  r.req.resume();
  if (!PROXY_METHODS.has(r.req.method ?? '')) throw methodNotAllowed();
  const kind = r.store.kind.kind;
  const noun = kind.toLowerCase();
  // the path to proxy to: the rest of the URL after proxy/, else the `path` parameter
  const opts: Record<string, unknown> = { kind: `${kind}ProxyOptions`, apiVersion: 'v1' };
  const path = info.parts.length ? info.parts.join('/') : r.query.get('path');
  if (path) opts.path = path;
  const id = splitSchemeNamePort(info.name);
  if (!id) throw errors.badRequest(`invalid ${noun} request ${JSON.stringify(info.name)}`);
  await admitConnect(r, opts);
  if (kind === 'Node') throw notConnected(kubeletOf(ctx, id.name), 'proxy', id.name, 'node');
  if (kind === 'Pod') {
    const pod = r.store.mustGet(info.namespace, id.name).obj;
    let port = id.port;
    if (port === '') {
      for (const c of Array.isArray(pod.spec?.containers) ? pod.spec.containers : []) {
        const p = Array.isArray(c?.ports) ? c.ports[0]?.containerPort : undefined;
        if (p !== undefined) {
          port = String(p);
          break;
        }
      }
    }
    const ip: unknown = pod.status?.podIPs?.[0]?.ip;
    if (typeof ip !== 'string' || !isGlobalUnicastIP(ip)) throw errors.badRequest('address not allowed');
    throw notReached('pods/proxy', `pod ${id.name}`, port === '' ? ip : joinHostPort(ip, port));
  }
  // a service: its port by number or name, then an address of its Endpoints on that port
  let portName = id.port;
  if (/^[+-]?\d+$/.test(portName)) {
    const svc = r.store.mustGet(info.namespace, id.name).obj;
    const n = Number(portName);
    const sp = (Array.isArray(svc.spec?.ports) ? svc.spec.ports : []).find((p: any) => p?.port === n);
    if (!sp) throw errors.serviceUnavailable(`no service port ${n} found for service ${JSON.stringify(id.name)}`);
    portName = sp.name ?? '';
  }
  const eps = ctx.endpoints.mustGet(info.namespace, id.name).obj;
  const subsets: any[] = Array.isArray(eps.subsets) ? eps.subsets : [];
  if (subsets.length === 0) throw errors.serviceUnavailable(`no endpoints available for service ${JSON.stringify(id.name)}`);
  for (const ss of subsets) {
    const addrs: any[] = Array.isArray(ss?.addresses) ? ss.addresses : [];
    for (const p of Array.isArray(ss?.ports) ? ss.ports : []) {
      if ((p?.name ?? '') !== portName || addrs.length === 0) continue;
      throw notReached('services/proxy', `service ${id.name}`, joinHostPort(addrs[0].ip, String(p.port)));
    }
  }
  throw errors.serviceUnavailable(`no endpoints available for service ${JSON.stringify(info.name)}`);
}

/** "name", "name:port" or "scheme:name:port" (scheme http, https or empty); undefined when it is none of them */
function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | undefined {
  const parts = id.split(':');
  let scheme = '';
  let name: string;
  let port = '';
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) [name, port] = parts as [string, string];
  else if (parts.length === 3) [scheme, name, port] = parts as [string, string, string];
  else return undefined;
  return name !== '' && (scheme === '' || scheme === 'http' || scheme === 'https') ? { scheme, name, port } : undefined;
}

// ---- options, as kube-apiserver converts them from the query ----

/** an integer parameter (strconv.ParseInt's range and messages); absent: undefined */
function intParam(q: URLSearchParams, name: string, bits: 32 | 64): number | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  return parseGoInt(v, bits);
}

function parseGoInt(v: string, bits: 32 | 64): number {
  if (!/^[+-]?\d+$/.test(v)) throw errors.badRequest(`strconv.ParseInt: parsing ${goQuote(v)}: invalid syntax`);
  const n = BigInt(v);
  const max = bits === 64 ? 2n ** 63n : 2n ** 31n;
  if (n >= max || n < -max) throw errors.badRequest(`strconv.ParseInt: parsing ${goQuote(v)}: value out of range`);
  return Number(n);
}

interface LogOptions {
  kind: 'PodLogOptions';
  apiVersion: 'v1';
  container?: string;
  follow?: boolean;
  previous?: boolean;
  sinceSeconds?: number;
  sinceTime?: string;
  timestamps?: boolean;
  tailLines?: number;
  limitBytes?: number;
  insecureSkipTLSVerifyBackend?: boolean;
}

function podLogOptions(q: URLSearchParams): LogOptions {
  const o: LogOptions = { kind: 'PodLogOptions', apiVersion: 'v1' };
  const container = q.get('container');
  if (container) o.container = container;
  for (const b of ['follow', 'previous', 'timestamps', 'insecureSkipTLSVerifyBackend'] as const) {
    if (queryBool(q.get(b))) o[b] = true;
  }
  for (const n of ['sinceSeconds', 'tailLines', 'limitBytes'] as const) {
    const v = intParam(q, n, 64);
    if (v !== undefined) o[n] = v;
  }
  const since = q.get('sinceTime');
  // (an empty value or "null", as older clients sent, is no time: metav1.Time's query form)
  if (since !== null && since !== '' && since !== 'null') {
    if (normTime(since, false) === undefined) throw errors.badRequest(timeParseMessage(since));
    o.sinceTime = since;
  }
  return o;
}

/** kube-apiserver's checks of PodLogOptions (pods/log answers 422 with them) */
function validatePodLogOptions(o: LogOptions): FieldError[] {
  const errs: FieldError[] = [];
  if (o.tailLines !== undefined && o.tailLines < 0) errs.push(field.invalid('tailLines', o.tailLines, 'must be greater than or equal to 0'));
  if (o.limitBytes !== undefined && o.limitBytes < 1) errs.push(field.invalid('limitBytes', o.limitBytes, 'must be greater than 0'));
  if (o.sinceSeconds !== undefined && o.sinceTime !== undefined) errs.push(field.forbidden('', 'at most one of `sinceTime` or `sinceSeconds` may be specified'));
  else if (o.sinceSeconds !== undefined && o.sinceSeconds < 1) errs.push(field.invalid('sinceSeconds', o.sinceSeconds, 'must be greater than 0'));
  return errs;
}

/** PodExecOptions or PodAttachOptions, in their v1 form (what admission webhooks see) */
function streamOptions(q: URLSearchParams, exec: boolean): Record<string, unknown> {
  const o: Record<string, unknown> = { kind: exec ? 'PodExecOptions' : 'PodAttachOptions', apiVersion: 'v1' };
  for (const b of ['stdin', 'stdout', 'stderr', 'tty']) if (queryBool(q.get(b))) o[b] = true;
  const container = q.get('container');
  if (container) o.container = container;
  if (exec) o.command = q.getAll('command');
  return o;
}

function podPortForwardOptions(q: URLSearchParams): Record<string, unknown> {
  const o: Record<string, unknown> = { kind: 'PodPortForwardOptions', apiVersion: 'v1' };
  const ports = q.getAll('ports').map((p) => parseGoInt(p, 32));
  if (ports.length) o.ports = ports;
  return o;
}

/** admission of a connect request: operation CONNECT, the options as the object (mutating, then validating) */
async function admitConnect(r: Request, opts: Record<string, unknown>): Promise<void> {
  const a = admissionOf(r);
  if (!a) return;
  const attrs = admissionAttributes(r.store.kind, { ...a.request, operation: 'CONNECT', object: opts, options: undefined, dryRun: false });
  await a.chain.mutate(attrs);
  await a.chain.validate(attrs);
}

// ---- the pod's container and node ----

/** the containers of a pod, init and ephemeral ones included, in kube-apiserver's order */
function containerNames(pod: any): string[] {
  const names: string[] = [];
  for (const list of [pod.spec?.initContainers, pod.spec?.containers, pod.spec?.ephemeralContainers]) {
    if (Array.isArray(list)) for (const c of list) if (c && typeof c.name === 'string') names.push(c.name);
  }
  return names;
}

/** the container a request names must be the pod's; a request naming none needs a pod of one container (which it gets) */
function validateContainer(pod: any, container: string | undefined): string {
  const name = pod.metadata.name;
  if (!container) {
    const n = Array.isArray(pod.spec?.containers) ? pod.spec.containers.length : 0;
    if (n === 1) return String(pod.spec.containers[0]?.name ?? '');
    if (n === 0) throw errors.badRequest(`a container name must be specified for pod ${name}`);
    throw errors.badRequest(`a container name must be specified for pod ${name}, choose one of: [${containerNames(pod).join(' ')}]`);
  }
  if (!containerNames(pod).includes(container)) throw errors.badRequest(`container ${container} is not valid for pod ${name}`);
  return container;
}

/** the kubelet address of a node, as kube-apiserver picks it: 404 for a node that is gone, 500 when it reports no usable address */
function kubeletOf(ctx: ConnectContext, nodeName: string): { node: string; host: string; port: number } {
  const node = ctx.nodes.mustGet('', nodeName).obj;
  const addresses: any[] = Array.isArray(node.status?.addresses) ? node.status.addresses : [];
  let host: string | undefined;
  for (const t of ctx.kubelet?.preferredAddressTypes ?? PREFERRED_ADDRESS_TYPES) {
    host = addresses.find((a) => a?.type === t)?.address;
    if (host !== undefined) break;
  }
  if (host === undefined) {
    // (kube-apiserver's error is not a Status: it answers 500 with no reason, and Go's %v of the addresses)
    throw new StatusError(500, '', `no preferred addresses found; known addresses: [${addresses.map((a) => `{${a?.type ?? ''} ${a?.address ?? ''}}`).join(' ')}]`);
  }
  const p = node.status?.daemonEndpoints?.kubeletEndpoint?.Port;
  return { node: nodeName, host, port: typeof p === 'number' && p > 0 ? p : DEFAULT_KUBELET_PORT };
}

function notConnected(k: { node: string; host: string; port: number }, sub: string, name: string, noun = 'pod'): StatusError {
  return errors.serviceUnavailable(
    `${noun}s/${sub} of ${noun} ${name} needs a connection to the kubelet of node ${JSON.stringify(k.node)} (${joinHostPort(k.host, String(k.port))}), and this API server does not connect to node agents yet`,
  );
}

function notReached(what: string, of: string, at: string): StatusError {
  return errors.serviceUnavailable(`${what} of ${of} would go to ${at}, and this API server does not proxy yet`);
}

// ---- the log, from the kubelet (LogLocation, then LocationStreamer) ----

/** the most of a kubelet's error answer read (GenericHttpResponseChecker's maxReadLength) */
const MAX_ERROR_BODY = 50_000;

const DEFAULT_KUBELET_CLIENT: KubeletClientConfig = { preferredAddressTypes: [...PREFERRED_ADDRESS_TYPES], timeoutMs: DEFAULT_KUBELET_TIMEOUT_MS };

/** metav1.Time's RFC 3339 form, in seconds (LogLocation formats sinceTime with time.RFC3339) */
function rfc3339Seconds(t: string): string {
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? t : new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.000Z$/, 'Z');
}

/** the query LogLocation sends, in url.Values.Encode's order (sorted by key) */
function kubeletLogQuery(o: LogOptions): string {
  const q: [string, string][] = [];
  if (o.follow) q.push(['follow', 'true']);
  if (o.limitBytes !== undefined) q.push(['limitBytes', String(o.limitBytes)]);
  if (o.previous) q.push(['previous', 'true']);
  if (o.sinceSeconds !== undefined) q.push(['sinceSeconds', String(o.sinceSeconds)]);
  if (o.sinceTime !== undefined) q.push(['sinceTime', rfc3339Seconds(o.sinceTime)]);
  if (o.tailLines !== undefined) q.push(['tailLines', String(o.tailLines)]);
  if (o.timestamps) q.push(['timestamps', 'true']);
  return q.length ? `?${new URLSearchParams(q).toString()}` : '';
}

/** the reason and message of k8s.io/apimachinery's NewGenericServerResponse for a status code (no verb: kube-apiserver's checker passes none) */
function genericServerResponse(code: number, body: string): [string, string] {
  switch (code) {
    case 409:
      return ['Conflict', 'the server reported a conflict'];
    case 404:
      return ['NotFound', 'the server could not find the requested resource'];
    case 400:
      return ['BadRequest', 'the server rejected our request for an unknown reason'];
    case 401:
      return ['Unauthorized', 'the server has asked for the client to provide credentials'];
    case 403:
      return ['Forbidden', body];
    case 406:
      return ['NotAcceptable', body === '' || body === 'unknown' ? 'the server was unable to respond with a content type that the client supports' : body];
    case 415:
      return ['UnsupportedMediaType', body];
    case 405:
      return ['MethodNotAllowed', 'the server does not allow this method on the requested resource'];
    case 422:
      return ['Invalid', 'the server rejected our request due to an error in our request'];
    case 503:
      return ['ServiceUnavailable', 'the server is currently unable to handle the request'];
    case 504:
      return ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'];
    case 429:
      return ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'];
    default:
      if (code >= 500) return ['InternalError', `an error on the server (${goQuote(body)}) has prevented the request from succeeding`];
      return ['', `the server responded with the status code ${code} but did not return more information`];
  }
}

/** a kubelet's answer that is not 2xx, as kube-apiserver's GenericHttpResponseChecker turns it into an error */
export function kubeletAnswerError(code: number, body: string, podName: string): StatusError {
  if (code === 500) return errors.internal(new Error(body));
  if (code === 400) return errors.badRequest(body);
  const [reason, message] = genericServerResponse(code, body);
  return new StatusError(code, reason, `${message} ( pods/log ${podName})`, { name: podName, kind: 'pods/log' });
}

/**
 * GET the container's log from its node's kubelet and stream it to the client (see the head of
 * this file). Rejects, before anything is written, with the error to answer.
 */
function streamLog(r: Request, cfg: KubeletClientConfig | undefined, k: { host: string; port: number }, pod: any, container: string, opts: LogOptions): Promise<void> {
  const c = cfg ?? DEFAULT_KUBELET_CLIENT;
  const enc = encodeURIComponent;
  const path = `/containerLogs/${enc(pod.metadata.namespace ?? '')}/${enc(pod.metadata.name)}/${enc(container)}${kubeletLogQuery(opts)}`;
  const hostPort = joinHostPort(k.host, String(k.port));
  const url = `https://${hostPort}${path}`;
  // (no CA given, or the client asked: the kubelet's certificate is not verified)
  const verify = c.ca !== undefined && opts.insecureSkipTLSVerifyBackend !== true;
  const res = r.res;
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const fail = (e: StatusError) => {
      if (settled) return;
      settled = true;
      reject(e);
    };
    const finish = () => {
      if (settled) return;
      settled = true;
      resolve();
    };
    let up: ClientRequest;
    try {
      up = https.request({
        host: k.host,
        port: k.port,
        method: 'GET',
        path,
        agent: false,
        cert: c.cert,
        key: c.key,
        ca: verify ? c.ca : undefined,
        rejectUnauthorized: verify,
        // (Go names the server only when it is not an address)
        ...(isIP(k.host) ? {} : { servername: k.host }),
      });
    } catch (e) {
      // a client certificate or CA TLS cannot use: the transport could not be made
      fail(errors.internal(e));
      return;
    }
    // --kubelet-timeout: the connection and its handshake
    let connected = false;
    const timer = setTimeout(() => {
      up.destroy(connected ? Object.assign(new Error('net/http: TLS handshake timeout'), { code: 'TLS_HANDSHAKE_TIMEOUT' }) : Object.assign(new Error('i/o timeout'), { code: 'ETIMEDOUT' }));
    }, c.timeoutMs > 0 ? c.timeoutMs : DEFAULT_KUBELET_TIMEOUT_MS);
    up.once('socket', (s: TLSSocket) => {
      s.once('connect', () => (connected = true));
      s.once('secureConnect', () => clearTimeout(timer));
    });
    // the client went away: the kubelet's request ends too
    const gone = () => {
      clearTimeout(timer);
      up.destroy();
      finish();
    };
    res.once('close', gone);
    up.on('error', (e) => {
      clearTimeout(timer);
      if (settled) return;
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'TLS_HANDSHAKE_TIMEOUT' ? e.message : code === 'ECONNRESET' ? 'read: connection reset by peer' : goDialError(e, { host: k.host, port: k.port }) ?? e.message;
      res.removeListener('close', gone);
      // (an error that is not a Status: 500 with no reason, as kube-apiserver answers it)
      fail(new StatusError(500, '', `Get ${goQuote(url)}: ${why}`));
    });
    up.on('response', (ur: IncomingMessage) => {
      clearTimeout(timer);
      const status = ur.statusCode ?? 0;
      if (status < 200 || status > 206) {
        const chunks: Buffer[] = [];
        let n = 0;
        ur.on('data', (d: Buffer) => {
          if (n >= MAX_ERROR_BODY) return;
          chunks.push(d.subarray(0, MAX_ERROR_BODY - n));
          n += Math.min(d.length, MAX_ERROR_BODY - n);
          if (n >= MAX_ERROR_BODY) ur.destroy();
        });
        const answer = () => {
          res.removeListener('close', gone);
          fail(kubeletAnswerError(status, Buffer.concat(chunks).toString('utf8'), pod.metadata.name));
        };
        ur.once('end', answer);
        ur.once('close', answer);
        ur.once('error', answer);
        return;
      }
      res.statusCode = 200;
      res.setHeader('Content-Type', 'text/plain');
      res.flushHeaders();
      ur.on('data', (d: Buffer) => {
        if (!res.write(d)) {
          ur.pause();
          res.once('drain', () => ur.resume());
        }
      });
      // (the kubelet's end, or its connection lost: the stream ends, as io.Copy returns)
      const end = () => {
        res.removeListener('close', gone);
        if (!res.writableEnded) res.end();
        finish();
      };
      ur.once('end', end);
      ur.once('close', end);
      ur.once('error', end);
    });
    up.end();
  });
}
