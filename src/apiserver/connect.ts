// The subresources of a Pod that reach into its node: log (GET), and exec, attach and portforward
// (GET, as a WebSocket upgrade, or POST, as a SPDY upgrade), as kube-apiserver's pod registry
// serves them up to the point where it connects to the node's kubelet.
//
// kube-apiserver parses the request's options (a malformed number is a 400), validates them (log:
// 422 PodLogOptions), runs admission for exec, attach and portforward (operation CONNECT, the
// options as the object), looks the pod up (404), checks the container (400: a pod of several
// containers needs one named, and a named one must be the pod's), and then:
// - a pod not yet on a node: log answers 204 No Content (kubectl prints nothing), the others 400
//   "pod <name> does not have a host assigned";
// - a pod on a node: the Node is looked up (404 when it is gone), its address is the first of its
//   status.addresses by the preferred types (500 when none matches), and the port its kubelet's
//   (status.daemonEndpoints.kubeletEndpoint.port, else 10250).
// Keelson's API server does not connect to node agents yet (the node agent is a later part of the
// project): once the request has come that far it is answered 503 ServiceUnavailable, naming the
// node and the kubelet address it would have used. No request is sent to the node.
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

/** the Pod subresources served here (and `proxy` of pods, services and nodes: handleProxy) */
export const POD_CONNECT_SUBRESOURCES: ReadonlySet<string> = new Set(['log', 'exec', 'attach', 'portforward']);

/** the core kinds whose `proxy` subresource is served by handleProxy */
export const PROXY_KINDS: ReadonlySet<string> = new Set(['Pod', 'Service', 'Node']);

/** what a connect request needs besides its own store */
export interface ConnectContext {
  nodes: ResourceStore;
  /** the Endpoints of services, for services/proxy */
  endpoints: ResourceStore;
}

/** kube-apiserver's default --kubelet-preferred-address-types */
const PREFERRED_ADDRESS_TYPES = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];
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
    validateContainer(pod, opts.container);
    // (kube-apiserver's log location is empty for a pod on no node: its streamer has nothing to send)
    if (!pod.spec?.nodeName) {
      r.res.statusCode = 204;
      r.res.end();
      return;
    }
    throw notConnected(kubeletOf(ctx, pod.spec.nodeName), 'log', pod.metadata.name);
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

/** the container a request names must be the pod's; a request naming none needs a pod of one container */
function validateContainer(pod: any, container: string | undefined): void {
  const name = pod.metadata.name;
  if (!container) {
    const n = Array.isArray(pod.spec?.containers) ? pod.spec.containers.length : 0;
    if (n === 1) return;
    if (n === 0) throw errors.badRequest(`a container name must be specified for pod ${name}`);
    throw errors.badRequest(`a container name must be specified for pod ${name}, choose one of: [${containerNames(pod).join(' ')}]`);
  }
  if (!containerNames(pod).includes(container)) throw errors.badRequest(`container ${container} is not valid for pod ${name}`);
}

/** the kubelet address of a node, as kube-apiserver picks it: 404 for a node that is gone, 500 when it reports no usable address */
function kubeletOf(ctx: ConnectContext, nodeName: string): { node: string; host: string; port: number } {
  const node = ctx.nodes.mustGet('', nodeName).obj;
  const addresses: any[] = Array.isArray(node.status?.addresses) ? node.status.addresses : [];
  let host: string | undefined;
  for (const t of PREFERRED_ADDRESS_TYPES) {
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
