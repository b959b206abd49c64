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
// exec, attach and portforward are proxied to that kubelet as kube-apiserver's ExecREST,
// AttachREST and PortForwardREST do (ExecLocation, AttachLocation, PortForwardLocation, then
// k8s.io/apimachinery's UpgradeAwareHandler with UpgradeRequired): the location is
// https://<address>:<port>/exec|attach/<namespace>/<pod>/<container> or
// /portForward/<namespace>/<pod>, with the options as the kubelet reads them (input, output,
// error and tty as "1", each command, `port` as one comma-separated list; url.Values' order). Then:
// - a request that is no upgrade (no "upgrade" in Connection) is 400 "Upgrade request required";
// - the kubelet is dialled (--kubelet-timeout bounds the connection and its TLS handshake,
//   --kubelet-client-certificate is presented, --kubelet-certificate-authority verifies it) and
//   sent the client's request as it came (method, headers in their order, repeated ones too:
//   Connection, Upgrade, X-Stream-Protocol-Version, Sec-WebSocket-*), less its credentials
//   (Authorization and Impersonate-*, which kube-apiserver's filters remove) and with
//   X-Forwarded-For appended; no dial: 500, no reason, "error dialing backend: dial tcp ...";
// - the kubelet's 101 is written to the client as it came, and from then on the two connections
//   are piped both ways until either ends (the client's is taken out of the HTTP/1.1 layer:
//   hijack below); an answer of 400 or more is echoed to the client (kubectl prints its text:
//   `unable to upgrade connection: container not found ("main")`); another is 500 "invalid
//   upgrade response: status code <n>".
// Nothing is translated: kube-apiserver 1.30+ ends a WebSocket `v5.channel.k8s.io` exec or attach
// itself and speaks SPDY to the kubelet (TranslateStreamCloseWebsocketRequests), and tunnels a
// WebSocket port forward (PortForwardWebsockets); Keelson passes the WebSocket upgrade on to the
// kubelet and the runtime like any other. containerd 1.6's streaming server knows no v5 (nor the
// port forward's tunnel) and refuses it with 403 Forbidden, which kubectl 1.30+ takes for an
// upgrade failure and falls back to SPDY, as it does against a kube-apiserver with those gates off.
// A runtime that speaks v5 gets the WebSocket end to end. So the API server need not refuse
// WebSocket upgrades itself.
//
// The proxy subresources of pods, services and nodes (any method kube-apiserver proxies; the rest
// of the path after `proxy/` the path to proxy to) are resolved as kube-apiserver resolves their
// location: the name may carry a port and a scheme (`https:web:8443`; 400 when it cannot be
// split), admission CONNECT with the Pod-, Service- or NodeProxyOptions, then
// - a pod: its IP (400 "address not allowed" unless a global unicast address) and the port named,
//   else its first container port;
// - a service: its port by number or name, then a random address of its Endpoints on that port
//   that is an address of the pod its targetRef names (503 "no endpoints available");
// - a node: its kubelet's address, whose every IP must be global unicast (400 "address not
//   allowed": a node at 127.0.0.1 is not proxied), over HTTPS with the kubelet client
//   certificate; another port than the kubelet's goes as a pod's does.
// The request is then proxied (proxy.ts): an upgrade spliced to the backend, anything else through
// a reverse proxy that rewrites the backend's links to go through the proxy again. Pods, services
// and other node ports are reached as kube-apiserver's proxy transport reaches them: plain HTTP,
// or HTTPS without verifying the backend's certificate (an IP has no name to check) and with no
// client certificate.
import { errors, field, StatusError, type FieldError } from '../machinery/errors.js';
import { admissionOf, methodNotAllowed, type Request } from './handlers.js';
import { admissionAttributes } from './admission/wiring.js';
import { queryBool } from './requestinfo.js';
import { normTime, timeParseMessage } from '../codec/json.js';
import { isGlobalUnicastIP } from '../schema/validation/util.js';
import { joinHostPort } from '../schema/printers/format.js';
import type { ResourceStore } from './registry/store.js';
import { goQuote } from '../machinery/gostrings.js';
import { isUpgradeRequest, joinPreserveTrailingSlash, proxyHttp, proxyUpgrade, pump, UpgradeProxyError, watchDial, type Dial, type UpgradeTarget } from './proxy.js';
import https from 'node:https';
import { isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import type { ClientRequest, IncomingMessage } from 'node:http';

/** the Pod subresources served here (and `proxy` of pods, services and nodes: handleProxy) */
export const POD_CONNECT_SUBRESOURCES: ReadonlySet<string> = new Set(['log', 'exec', 'attach', 'portforward']);

/** the core kinds whose `proxy` subresource is served by handleProxy */
export const PROXY_KINDS: ReadonlySet<string> = new Set(['Pod', 'Service', 'Node']);

/** what a connect request needs besides its own store */
export interface ConnectContext {
  nodes: ResourceStore;
  /** the Endpoints of services, for services/proxy */
  endpoints: ResourceStore;
  /** the pods, whose addresses services/proxy checks */
  pods: ResourceStore;
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
  const container = sub === 'portforward' ? '' : validateContainer(pod, opts.container as string | undefined);
  if (!pod.spec?.nodeName) throw errors.badRequest(`pod ${info.name} does not have a host assigned`);
  const k = kubeletOf(ctx, pod.spec.nodeName);
  const enc = encodeURIComponent;
  const ns = enc(pod.metadata.namespace ?? '');
  const path = sub === 'portforward' ? `/portForward/${ns}/${enc(pod.metadata.name)}` : `/${sub}/${ns}/${enc(pod.metadata.name)}/${enc(container)}`;
  return streamToKubelet(r, ctx.kubelet, k, path + kubeletStreamQuery(opts));
}

/** the methods kube-apiserver proxies */
const PROXY_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/** how long kube-apiserver's proxy transport gives a connection (Go's default dialer) */
const PROXY_DIAL_TIMEOUT_MS = 30_000;

/** pods/proxy, services/proxy and nodes/proxy (see the head of this file) */
export async function handleProxy(r: Request, ctx: ConnectContext): Promise<void> {
  try {
    await proxyTo(r, ctx);
  } catch (e) {
    // (a request refused before proxying has its body read and dropped)
    r.req.resume();
    throw e;
  }
}

async function proxyTo(r: Request, ctx: ConnectContext): Promise<void> {
  const { info } = r;
  if (!PROXY_METHODS.has(r.req.method ?? '')) throw methodNotAllowed();
  const kind = r.store.kind.kind;
  const noun = kind.toLowerCase();
  // the path to proxy to, as kube-apiserver's connect handler makes it: the raw rest of the URL
  // after proxy/, with a leading slash and the URL's trailing one (a `path` parameter is not read)
  const rawSegs = info.path.split('/');
  if (rawSegs.length > 1 && rawSegs[rawSegs.length - 1] === '') rawSegs.pop();
  let sub = info.parts.length ? rawSegs.slice(rawSegs.length - info.parts.length).join('/') : '';
  if (sub !== '' && !sub.startsWith('/')) sub = `/${sub}`;
  if (info.path.endsWith('/') && !sub.endsWith('/')) sub += '/';
  const opts: Record<string, unknown> = { kind: `${kind}ProxyOptions`, apiVersion: 'v1' };
  if (sub) opts.path = sub;
  const id = splitSchemeNamePort(info.name);
  if (!id) throw errors.badRequest(`invalid ${noun} request ${JSON.stringify(info.name)}`);
  await admitConnect(r, opts);
  const loc = await proxyLocation(r, ctx, kind, id);
  // UpgradeAwareHandler: an upgrade first (to the location as it is), then the root's redirect, then the proxy
  if (isUpgradeRequest(r.req)) {
    const url = new URL(`${loc.scheme}://${loc.host}${joinPreserveTrailingSlash('', sub) || ''}`);
    return proxyUpgrade(r.req, r.res, { ...loc.tls, url }).catch((e: unknown) => {
      if (e instanceof UpgradeProxyError) throw new StatusError(500, '', e.message);
      throw e;
    });
  }
  let path = joinPreserveTrailingSlash('', sub);
  if (!path.endsWith('/') && info.path.endsWith('/')) path += '/';
  const method = r.req.method;
  if (path === '' && (method === 'GET' || method === 'HEAD')) {
    // (kube-apiserver's redirect of a proxy's root to the same with a slash)
    const q = r.query.toString();
    r.req.resume();
    r.res.statusCode = 301;
    r.res.setHeader('Location', `${info.path}/${q ? `?${q}` : ''}`);
    r.res.end();
    return;
  }
  let suffix = path;
  if (info.path.endsWith('/') && !suffix.endsWith('/')) suffix += '/';
  const pathPrepend = suffix !== '' && info.path.endsWith(suffix) ? info.path.slice(0, info.path.length - suffix.length) : info.path;
  const search = r.query.toString();
  const url = new URL(`${loc.scheme}://${loc.host}${path.startsWith('/') ? path : `/${path}`}${search ? `?${search}` : ''}`);
  return proxyHttp(r.req, r.res, { ...loc.tls, url, backendHost: loc.host, pathPrepend });
}

/** where a proxy subresource's request goes: scheme, host[:port], and the transport's TLS */
interface ProxyLocation {
  scheme: string;
  host: string;
  tls: Omit<UpgradeTarget, 'url'>;
}

/** kube-apiserver's proxy transport: no client certificate, the backend's certificate not verified */
const PROXY_TRANSPORT: Omit<UpgradeTarget, 'url'> = { dialTimeoutMs: PROXY_DIAL_TIMEOUT_MS };

async function proxyLocation(r: Request, ctx: ConnectContext, kind: string, id: { scheme: string; name: string; port: string }): Promise<ProxyLocation> {
  const { info } = r;
  const scheme = id.scheme || 'http';
  if (kind === 'Node') {
    const k = kubeletOf(ctx, id.name);
    await proxyableHostname(k.host);
    if (id.port === '' || id.port === String(k.port)) {
      const c = ctx.kubelet ?? DEFAULT_KUBELET_CLIENT;
      return { scheme: 'https', host: joinHostPort(k.host, String(k.port)), tls: { cert: c.cert, key: c.key, ca: c.ca, dialTimeoutMs: c.timeoutMs > 0 ? c.timeoutMs : DEFAULT_KUBELET_TIMEOUT_MS } };
    }
    return { scheme, host: joinHostPort(k.host, id.port), tls: PROXY_TRANSPORT };
  }
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
    return { scheme, host: port === '' ? (ip.includes(':') ? `[${ip}]` : ip) : joinHostPort(ip, port), tls: PROXY_TRANSPORT };
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
  // (a subset and an address picked at random, as kube-apiserver spreads them; an address must be its pod's)
  const ssSeed = Math.floor(Math.random() * subsets.length);
  for (let i = 0; i < subsets.length; i++) {
    const ss = subsets[(ssSeed + i) % subsets.length];
    const addrs: any[] = Array.isArray(ss?.addresses) ? ss.addresses : [];
    if (addrs.length === 0) continue;
    for (const p of Array.isArray(ss?.ports) ? ss.ports : []) {
      if ((p?.name ?? '') !== portName) continue;
      const seed = Math.floor(Math.random() * addrs.length);
      for (let t = 0; t < addrs.length; t++) {
        const a = addrs[(seed + t) % addrs.length];
        if (!podAddress(ctx, info.namespace, a)) continue;
        return { scheme, host: joinHostPort(String(a.ip), String(p.port)), tls: PROXY_TRANSPORT };
      }
    }
  }
  throw errors.serviceUnavailable(`no endpoints available for service ${JSON.stringify(info.name)}`);
}

/** kube-apiserver's isValidAddress: an Endpoints address that is an IP of the pod (in the service's namespace) its targetRef names */
function podAddress(ctx: ConnectContext, namespace: string, a: any): boolean {
  const ref = a?.targetRef;
  if (!ref || ref.namespace !== namespace || typeof ref.name !== 'string') return false;
  const pod = ctx.pods.get(namespace, ref.name)?.obj;
  const ips: any[] = Array.isArray(pod?.status?.podIPs) ? pod.status.podIPs : [];
  return ips.some((p) => p?.ip === a.ip);
}

/** the node's address must resolve to global unicast addresses only (kube-apiserver's isProxyableHostname), else 400 */
async function proxyableHostname(host: string): Promise<void> {
  let addrs: string[];
  if (isIP(host)) addrs = [host];
  else {
    try {
      addrs = (await lookup(host, { all: true })).map((a) => a.address);
    } catch (e) {
      throw errors.badRequest(`lookup ${host}: ${(e as NodeJS.ErrnoException).code === 'ENOTFOUND' ? 'no such host' : (e as Error).message}`);
    }
  }
  if (addrs.length === 0) throw errors.badRequest('no addresses for hostname');
  if (!addrs.every(isGlobalUnicastIP)) throw errors.badRequest('address not allowed');
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
    let dial: Dial | undefined;
    const fail = (e: StatusError) => {
      if (settled) return;
      settled = true;
      dial?.release();
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
    // --kubelet-timeout: the connection and its handshake; the client going away ends the kubelet's request
    dial = watchDial(up, {
      secure: true, host: k.host, port: k.port, timeoutMs: c.timeoutMs > 0 ? c.timeoutMs : DEFAULT_KUBELET_TIMEOUT_MS, client: res,
      gone: finish,
      // (an error that is not a Status: 500 with no reason, as kube-apiserver answers it)
      failed: (words) => fail(new StatusError(500, '', `Get ${goQuote(url)}: ${words}`)),
    });
    up.on('response', (ur: IncomingMessage) => {
      dial.clear();
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
          dial?.release();
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
      pump(ur, res);
      // (the kubelet's end, or its connection lost: the stream ends, as io.Copy returns)
      const end = () => {
        dial?.release();
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

// ---- exec, attach and portforward: the upgrade, proxied to the kubelet ----

/** Go's url.QueryEscape: every byte but letters, digits and -_.~ escaped, a space as '+' */
function goQueryEscape(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    if ((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x2d || b === 0x5f || b === 0x2e || b === 0x7e) out += String.fromCharCode(b);
    else if (b === 0x20) out += '+';
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * The query kube-apiserver's streamParams gives the kubelet (url.Values.Encode: sorted by key): an
 * exec's or attach's streams as "1" under the kubelet's names (input, output, error, tty) and each
 * command; a port forward's ports as one comma-separated `port`.
 */
function kubeletStreamQuery(opts: Record<string, unknown>): string {
  const q: [string, string][] = [];
  if (opts.kind === 'PodPortForwardOptions') {
    if (Array.isArray(opts.ports) && opts.ports.length) q.push(['port', opts.ports.join(',')]);
  } else {
    for (const c of Array.isArray(opts.command) ? (opts.command as string[]) : []) q.push(['command', c]);
    if (opts.stderr) q.push(['error', '1']);
    if (opts.stdin) q.push(['input', '1']);
    if (opts.stdout) q.push(['output', '1']);
    if (opts.tty) q.push(['tty', '1']);
  }
  return q.length ? `?${q.map(([k, v]) => `${goQueryEscape(k)}=${goQueryEscape(v)}`).join('&')}` : '';
}

/** the upgrade proxied to the node's kubelet (see the head of this file); errors are kube-apiserver's */
function streamToKubelet(r: Request, cfg: KubeletClientConfig | undefined, k: { host: string; port: number }, target: string): Promise<void> {
  const c = cfg ?? DEFAULT_KUBELET_CLIENT;
  const url = new URL(`https://${joinHostPort(k.host, String(k.port))}${target}`);
  return proxyUpgrade(r.req, r.res, { url, cert: c.cert, key: c.key, ca: c.ca, dialTimeoutMs: c.timeoutMs > 0 ? c.timeoutMs : DEFAULT_KUBELET_TIMEOUT_MS }).catch((e: unknown) => {
    // (kube-apiserver's responder: the BadRequest as it is, any other error 500 with no reason)
    if (e instanceof UpgradeProxyError) throw e.upgradeRequired ? errors.badRequest(e.message) : new StatusError(500, '', e.message);
    throw e;
  });
}
