// A container's environment as the kubelet builds it before CreateContainer
// (kubelet_pods.go makeEnvironmentVariables), and the `$(VAR)` expansion of its command and args.
//
// The order of the work, as the kubelet's:
//   1. the service links: for each service with a cluster IP, <NAME>_SERVICE_HOST, <NAME>_SERVICE_PORT,
//      <NAME>_SERVICE_PORT_<PORTNAME>, and the docker-link variables <NAME>_PORT,
//      <NAME>_PORT_<port>_<PROTO>{,_PROTO,_PORT,_ADDR}, for the services of the pod's namespace when
//      spec.enableServiceLinks (default true) and always for the master service default/kubernetes;
//   2. envFrom, in order (later sources replace earlier keys): every key of the ConfigMap's data or
//      Secret's data, with the prefix; a key that is not an environment variable name is skipped
//      (the kubelet records an InvalidEnvironmentVariableNames event; Kubernetes 1.33 checks the
//      relaxed rule: printable ASCII but '='); a missing optional source is skipped;
//   3. env, in order: a value has its `$(VAR)` references expanded against what is defined so far
//      (envFrom and the earlier env entries) and then the service variables; a valueFrom is resolved
//      (fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef); a missing optional source or key
//      leaves the variable out;
//   4. the service variables that no envFrom or env entry defined.
// Any failure is a ContainerConfigError whose message is the kubelet's: the pod worker reports it as
// the waiting reason CreateContainerConfigError.
//
// The kubelet's own result order is a Go map's (random); here it is deterministic: the envFrom and
// env names in the order they were first defined, then the service variables by service name.
import { isIPv6 } from 'node:net';
import { isNotFound, type RESTClient } from '../client/rest.js';
import { goQuote } from '../machinery/gostrings.js';
import { isQualifiedName } from '../machinery/validation.js';
import { parseQuantity, quantityMilliValue, quantityValue, type Quantity } from '../schema/validation/quantity.js';
import { isRelaxedEnvVarName } from '../schema/validation/util.js';

export interface EnvVar {
  name: string;
  value: string;
}

export interface EnvContext {
  /** the kubelet's API client; none in standalone mode (no services, ConfigMaps or Secrets) */
  client: RESTClient | undefined;
  nodeName: string;
  /** the node's IPs (status.hostIP is the first) */
  hostIPs: string[];
  /** the pod's IPs from its sandbox */
  podIPs: string[];
  /** the node's allocatable, for resourceFieldRef of containers without limits */
  nodeAllocatable: Record<string, string>;
  /**
   * The services of a namespace (core/v1 Service objects), from the caller's cache; called for the
   * pod's namespace and for "default". Without it the services are read through the API (a list of
   * the pod's namespace, a GET of default/kubernetes).
   */
  listServices?: (namespace: string) => Promise<any[]>;
}

/** A failure to make a container's configuration; its message is the waiting state's (reason CreateContainerConfigError). */
export class ContainerConfigError extends Error {
  override name = 'ContainerConfigError';
}

// ── $(VAR) expansion (third_party/forked/golang/expansion) ──────────────────────────────────────

/**
 * Expands `$(NAME)` references in `input`: `lookup` gives a value or undefined, in which case the
 * reference stays as written; `$$` is a literal `$`; a `$` before anything else, or a `$(` without a
 * closing parenthesis, is kept as is.
 */
export function expand(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  let i = 0;
  const n = input.length;
  while (i < n) {
    const c = input[i]!;
    if (c !== '$' || i + 1 >= n) {
      out += c;
      i++;
      continue;
    }
    const next = input[i + 1]!;
    if (next === '$') {
      // an escaped operator
      out += '$';
      i += 2;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        // an unterminated reference: the two characters stay, the rest is read on
        out += '$(';
        i += 2;
        continue;
      }
      const name = input.slice(i + 2, close);
      const v = lookup(name);
      out += v !== undefined ? v : `$(${name})`;
      i = close + 1;
    } else {
      out += '$' + next;
      i += 2;
    }
  }
  return out;
}

/** A lookup over maps, the first that has the name winning (expansion.MappingFuncFor). */
export function mappingFor(...maps: ReadonlyMap<string, string>[]): (name: string) => string | undefined {
  return (name) => {
    for (const m of maps) {
      const v = m.get(name);
      if (v !== undefined) return v;
    }
    return undefined;
  };
}

/** The last value of each name (a later entry replaces an earlier one). */
export function envMap(env: readonly EnvVar[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const e of env) m.set(e.name, e.value);
  return m;
}

/**
 * The container's command and args with `$(VAR)` references expanded against its environment
 * (kubecontainer.ExpandContainerCommandAndArgs); an unknown reference stays as written.
 */
export function expandCommandAndArgs(container: any, env: { name: string; value: string }[]): { command: string[]; args: string[] } {
  const lookup = mappingFor(envMap(env));
  const list = (v: unknown): string[] => (Array.isArray(v) ? v.map((s) => expand(String(s ?? ''), lookup)) : []);
  return { command: list(container?.command), args: list(container?.args) };
}

// ── service links (pkg/kubelet/envvars) ─────────────────────────────────────────────────────────

function envVarNameOf(s: string): string {
  return s.replaceAll('-', '_').toUpperCase();
}

/** whether a service has a cluster IP (not headless, not ExternalName) */
export function hasClusterIP(svc: any): boolean {
  const ip = svc?.spec?.clusterIP;
  return typeof ip === 'string' && ip !== '' && ip !== 'None';
}

function hostPort(ip: string, port: number): string {
  return isIPv6(ip) ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** The variables of the services given, in their order (envvars.FromServices); services without a cluster IP are skipped. */
export function serviceEnvVars(services: readonly any[]): EnvVar[] {
  const out: EnvVar[] = [];
  for (const svc of services) {
    if (!hasClusterIP(svc)) continue;
    const ports: any[] = Array.isArray(svc.spec?.ports) ? svc.spec.ports : [];
    if (ports.length === 0) continue;
    const ip: string = svc.spec.clusterIP;
    const prefix = envVarNameOf(String(svc.metadata?.name ?? ''));
    out.push({ name: `${prefix}_SERVICE_HOST`, value: ip });
    out.push({ name: `${prefix}_SERVICE_PORT`, value: String(ports[0].port) });
    for (const p of ports) {
      if (p.name) out.push({ name: `${prefix}_SERVICE_PORT_${envVarNameOf(String(p.name))}`, value: String(p.port) });
    }
    // the docker-link variables
    ports.forEach((p, i) => {
      const proto = String(p.protocol || 'TCP');
      const lower = proto.toLowerCase();
      const url = `${lower}://${hostPort(ip, p.port)}`;
      if (i === 0) out.push({ name: `${prefix}_PORT`, value: url });
      const pp = `${prefix}_PORT_${p.port}_${proto.toUpperCase()}`;
      out.push({ name: pp, value: url });
      out.push({ name: `${pp}_PROTO`, value: lower });
      out.push({ name: `${pp}_PORT`, value: String(p.port) });
      out.push({ name: `${pp}_ADDR`, value: ip });
    });
  }
  return out;
}

const enc = encodeURIComponent;

async function serviceEnvMap(pod: any, ctx: EnvContext): Promise<Map<string, string>> {
  const ns = String(pod?.metadata?.namespace ?? '');
  const links = pod?.spec?.enableServiceLinks !== false;
  const byName = new Map<string, any>();
  // (standalone mode: the kubelet knows no services)
  if (!ctx.client && !ctx.listServices) return new Map();
  const client = ctx.client!;
  try {
    // the master service first; a service of the same name in the pod's namespace replaces it
    let master: any;
    if (ctx.listServices) master = (await ctx.listServices('default')).find((s) => s?.metadata?.name === 'kubernetes');
    else {
      try {
        master = await client.json({ method: 'GET', path: '/api/v1/namespaces/default/services/kubernetes' });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    if (master && hasClusterIP(master)) byName.set('kubernetes', master);
    if (links && ns) {
      const local: any[] = ctx.listServices ? await ctx.listServices(ns) : ((await client.json({ method: 'GET', path: `/api/v1/namespaces/${enc(ns)}/services` }))?.items ?? []);
      for (const s of local) {
        if (hasClusterIP(s) && (s.metadata?.namespace ?? ns) === ns) byName.set(String(s.metadata?.name ?? ''), s);
      }
    }
  } catch {
    throw new ContainerConfigError('failed to list services when setting up env vars');
  }
  const names = [...byName.keys()].sort();
  return envMap(serviceEnvVars(names.map((n) => byName.get(n))));
}

// ── ConfigMaps and Secrets ──────────────────────────────────────────────────────────────────────

/** A ConfigMap or Secret read with GET through the API; undefined when it does not exist. */
export async function getObject(client: RESTClient, resource: 'configmaps' | 'secrets', namespace: string, name: string): Promise<any | undefined> {
  try {
    return await client.json({ method: 'GET', path: `/api/v1/namespaces/${enc(namespace)}/${resource}/${enc(name)}` });
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw new Error(errorMessage(e));
  }
}

/** the kubelet's words for a missing object (its managers' NotFound: `configmap "x" not found`) */
export function notFoundMessage(kind: 'configmap' | 'secret', name: string): string {
  return `${kind} "${name}" not found`;
}

/** a Secret's data, decoded */
export function secretData(secret: any): Map<string, Buffer> {
  const m = new Map<string, Buffer>();
  const data = secret?.data;
  if (data && typeof data === 'object') for (const [k, v] of Object.entries(data)) m.set(k, Buffer.from(String(v ?? ''), 'base64'));
  return m;
}

/** a ConfigMap's data (strings) */
export function configMapData(cm: any): Map<string, string> {
  const m = new Map<string, string>();
  const data = cm?.data;
  if (data && typeof data === 'object') for (const [k, v] of Object.entries(data)) m.set(k, String(v ?? ''));
  return m;
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// ── the downward API (pkg/fieldpath, pkg/api/v1/resource) ───────────────────────────────────────

/** Go's fieldpath.FormatMap: `key="value"` lines (value quoted as Go's %q), sorted by key */
export function formatMap(m: unknown): string {
  if (!m || typeof m !== 'object') return '';
  const entries = Object.entries(m as Record<string, unknown>);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.map(([k, v]) => `${k}=${goQuote(String(v ?? ''))}`).join('\n');
}

/** `metadata.labels['key']` → ['metadata.labels', 'key'] (fieldpath.SplitMaybeSubscriptedPath) */
export function splitSubscript(fieldPath: string): [string, string] | undefined {
  if (!fieldPath.endsWith("']")) return undefined;
  const s = fieldPath.slice(0, -2);
  const at = s.indexOf("['");
  if (at <= 0) return undefined;
  return [s.slice(0, at), s.slice(at + 2)];
}

/** The value of one of the pod's metadata fields (fieldpath.ExtractFieldPathAsString); throws Error worded as Kubernetes. */
export function extractFieldPath(pod: any, fieldPath: string): string {
  const meta = pod?.metadata ?? {};
  const sub = splitSubscript(fieldPath);
  if (sub) {
    const [path, key] = sub;
    if (path === 'metadata.annotations' || path === 'metadata.labels') {
      const errs = isQualifiedName(path === 'metadata.annotations' ? key.toLowerCase() : key);
      if (errs.length) throw new Error(`invalid key subscript in ${fieldPath}: ${errs.join(';')}`);
      const m = path === 'metadata.annotations' ? meta.annotations : meta.labels;
      return String(m?.[key] ?? '');
    }
    throw new Error(`fieldPath ${goQuote(fieldPath)} does not support subscript`);
  }
  switch (fieldPath) {
    case 'metadata.annotations':
      return formatMap(meta.annotations);
    case 'metadata.labels':
      return formatMap(meta.labels);
    case 'metadata.name':
      return String(meta.name ?? '');
    case 'metadata.namespace':
      return String(meta.namespace ?? '');
    case 'metadata.uid':
      return String(meta.uid ?? '');
  }
  throw new Error(`unsupported fieldPath: ${fieldPath}`);
}

/** podIPs with the node's family first (the kubelet's sortPodIPs) */
function sortPodIPs(podIPs: string[], hostIPs: string[]): string[] {
  if (podIPs.length < 2) return podIPs;
  const v6 = hostIPs.length > 0 && isIPv6(hostIPs[0]!);
  const first = podIPs.find((ip) => isIPv6(ip) === v6);
  if (first === undefined) return podIPs;
  return [first, ...podIPs.filter((ip) => ip !== first)];
}

/** An env fieldRef's value (the kubelet's podFieldSelectorRuntimeValue after ConvertDownwardAPIFieldLabel). */
export function podFieldValue(sel: any, pod: any, ctx: Pick<EnvContext, 'hostIPs' | 'podIPs'>): string {
  const version = String(sel?.apiVersion || 'v1');
  const label = String(sel?.fieldPath ?? '');
  if (version !== 'v1') throw new Error(`unsupported pod version: ${version}`);
  let path = label;
  const sub = splitSubscript(label);
  if (sub) {
    if (sub[0] !== 'metadata.annotations' && sub[0] !== 'metadata.labels') throw new Error(`field label does not support subscript: ${label}`);
  } else {
    switch (label) {
      case 'metadata.annotations':
      case 'metadata.labels':
      case 'metadata.name':
      case 'metadata.namespace':
      case 'metadata.uid':
      case 'spec.nodeName':
      case 'spec.restartPolicy':
      case 'spec.serviceAccountName':
      case 'spec.schedulerName':
      case 'status.phase':
      case 'status.hostIP':
      case 'status.hostIPs':
      case 'status.podIP':
      case 'status.podIPs':
        break;
      case 'spec.host':
        path = 'spec.nodeName';
        break;
      default:
        throw new Error(`field label not supported: ${label}`);
    }
  }
  const podIPs = sortPodIPs(ctx.podIPs, ctx.hostIPs);
  switch (path) {
    case 'spec.nodeName':
      return String(pod?.spec?.nodeName ?? '');
    case 'spec.serviceAccountName':
      return String(pod?.spec?.serviceAccountName ?? '');
    case 'status.hostIP':
      if (ctx.hostIPs.length === 0) throw new Error('host IP unknown; known addresses: []');
      return ctx.hostIPs[0]!;
    case 'status.hostIPs':
      if (ctx.hostIPs.length === 0) throw new Error('host IP unknown; known addresses: []');
      return ctx.hostIPs.join(',');
    case 'status.podIP':
      return podIPs[0] ?? '';
    case 'status.podIPs':
      return podIPs.join(',');
  }
  // (spec.restartPolicy, spec.schedulerName and status.phase pass the conversion but are not
  // values the kubelet extracts: "unsupported fieldPath", as in Kubernetes)
  return extractFieldPath(pod, path);
}

function findContainer(pod: any, name: string): any {
  for (const list of [pod?.spec?.containers, pod?.spec?.initContainers]) {
    if (!Array.isArray(list)) continue;
    const c = list.find((x: any) => x?.name === name);
    if (c) return c;
  }
  throw new Error(`container ${name} not found`);
}

const isHugePages = (r: string): boolean => r.startsWith('hugepages-');

/** the container's limits with the node's allocatable for each of cpu, memory, ephemeral-storage and hugepages it does not limit (MergeContainerResourceLimits) */
function limitsWithAllocatable(container: any, allocatable: Record<string, string>): Record<string, unknown> {
  const limits: Record<string, unknown> = { ...(container?.resources?.limits ?? {}) };
  const names = new Set(['cpu', 'memory', 'ephemeral-storage', ...Object.keys(allocatable).filter(isHugePages)]);
  for (const r of names) {
    const q = parseQuantity(limits[r]);
    if ((!q || q.nano === 0n) && allocatable[r] !== undefined) limits[r] = allocatable[r];
  }
  return limits;
}

function ceilDiv(a: bigint, b: bigint): bigint {
  if (b <= 0n) return 0n;
  if (a >= 0n) return (a + b - 1n) / b;
  return a / b; // toward zero is the ceiling of a negative quotient
}

const ZERO: Quantity = { nano: 0n, format: 'DecimalSI' };

/**
 * A resourceFieldRef's value: `limits.cpu` etc. of the container named (or `container` when the
 * selector names none), divided by the divisor (default 1) and rounded up, the node's allocatable
 * standing in for a missing limit (resource.ExtractContainerResourceValue after
 * MergeContainerResourceLimits).
 */
export function containerResourceValue(sel: any, pod: any, container: any | undefined, allocatable: Record<string, string>): string {
  const c = sel?.containerName ? findContainer(pod, String(sel.containerName)) : container;
  let divisor = parseQuantity(sel?.divisor);
  if (!divisor || divisor.nano === 0n) divisor = parseQuantity('1')!;
  const resource = String(sel?.resource ?? '');
  const limits = limitsWithAllocatable(c, allocatable);
  const requests: Record<string, unknown> = c?.resources?.requests ?? {};
  const dot = resource.indexOf('.');
  const kind = dot > 0 ? resource.slice(0, dot) : '';
  const name = dot > 0 ? resource.slice(dot + 1) : '';
  if ((kind === 'limits' || kind === 'requests') && (name === 'cpu' || name === 'memory' || name === 'ephemeral-storage' || isHugePages(name))) {
    const q = parseQuantity((kind === 'limits' ? limits : requests)[name]) ?? ZERO;
    if (name === 'cpu') return String(ceilDiv(quantityMilliValue(q), quantityMilliValue(divisor)));
    return String(ceilDiv(quantityValue(q), quantityValue(divisor)));
  }
  throw new Error(`unsupported container resource : ${resource}`);
}

// ── the environment ─────────────────────────────────────────────────────────────────────────────

/** The container's environment (see the top of this file); throws ContainerConfigError. */
export async function makeEnvironment(pod: any, container: any, ctx: EnvContext): Promise<{ name: string; value: string }[]> {
  try {
    return await buildEnvironment(pod, container, ctx);
  } catch (e) {
    if (e instanceof ContainerConfigError) throw e;
    throw new ContainerConfigError(errorMessage(e));
  }
}

async function buildEnvironment(pod: any, container: any, ctx: EnvContext): Promise<EnvVar[]> {
  const ns = String(pod?.metadata?.namespace ?? '');
  const serviceEnv = await serviceEnvMap(pod, ctx);
  const configMaps = new Map<string, any | undefined>();
  const secrets = new Map<string, any | undefined>();
  const configMap = async (name: string): Promise<any | undefined> => {
    if (!ctx.client) throw new ContainerConfigError(`couldn't get configMap ${ns}/${name}, no kubeClient defined`);
    if (!configMaps.has(name)) configMaps.set(name, await getObject(ctx.client, 'configmaps', ns, name));
    return configMaps.get(name);
  };
  const secret = async (name: string): Promise<any | undefined> => {
    if (!ctx.client) throw new ContainerConfigError(`couldn't get secret ${ns}/${name}, no kubeClient defined`);
    if (!secrets.has(name)) secrets.set(name, await getObject(ctx.client, 'secrets', ns, name));
    return secrets.get(name);
  };
  const env = new Map<string, string>();

  for (const from of Array.isArray(container?.envFrom) ? container.envFrom : []) {
    const prefix = String(from?.prefix ?? '');
    let entries: [string, string][];
    if (from?.configMapRef) {
      const ref = from.configMapRef;
      const name = String(ref.name ?? '');
      const cm = await configMap(name);
      if (!cm) {
        if (ref.optional === true) continue;
        throw new ContainerConfigError(notFoundMessage('configmap', name));
      }
      entries = [...configMapData(cm)];
    } else if (from?.secretRef) {
      const ref = from.secretRef;
      const name = String(ref.name ?? '');
      const s = await secret(name);
      if (!s) {
        if (ref.optional === true) continue;
        throw new ContainerConfigError(notFoundMessage('secret', name));
      }
      entries = [...secretData(s)].map(([k, v]) => [k, v.toString('utf8')]);
    } else continue;
    for (const [k, v] of entries) {
      const key = prefix + k;
      // (the kubelet records an InvalidEnvironmentVariableNames event for these)
      if (isRelaxedEnvVarName(key).length) continue;
      env.set(key, v);
    }
  }

  const lookup = mappingFor(env, serviceEnv);
  const allocatable = ctx.nodeAllocatable ?? {};
  for (const e of Array.isArray(container?.env) ? container.env : []) {
    const name = String(e?.name ?? '');
    let value = typeof e?.value === 'string' ? e.value : '';
    if (value !== '') value = expand(value, lookup);
    else if (e?.valueFrom) {
      const vf = e.valueFrom;
      if (vf.fieldRef) value = podFieldValue(vf.fieldRef, pod, ctx);
      else if (vf.resourceFieldRef) value = containerResourceValue(vf.resourceFieldRef, pod, container, allocatable);
      else if (vf.configMapKeyRef) {
        const ref = vf.configMapKeyRef;
        const cmName = String(ref.name ?? '');
        const key = String(ref.key ?? '');
        const optional = ref.optional === true;
        const cm = await configMap(cmName);
        if (!cm) {
          if (optional) continue;
          throw new ContainerConfigError(notFoundMessage('configmap', cmName));
        }
        const v = configMapData(cm).get(key);
        if (v === undefined) {
          if (optional) continue;
          throw new ContainerConfigError(`couldn't find key ${key} in ConfigMap ${ns}/${cmName}`);
        }
        value = v;
      } else if (vf.secretKeyRef) {
        const ref = vf.secretKeyRef;
        const sName = String(ref.name ?? '');
        const key = String(ref.key ?? '');
        const optional = ref.optional === true;
        const s = await secret(sName);
        if (!s) {
          if (optional) continue;
          throw new ContainerConfigError(notFoundMessage('secret', sName));
        }
        const v = secretData(s).get(key);
        if (v === undefined) {
          if (optional) continue;
          throw new ContainerConfigError(`couldn't find key ${key} in Secret ${ns}/${sName}`);
        }
        value = v.toString('utf8');
      }
      // (fileKeyRef, behind the alpha EnvFiles gate, is not supported: the variable is empty)
    }
    env.set(name, value);
  }

  const out: EnvVar[] = [...env].map(([name, value]) => ({ name, value }));
  for (const [name, value] of serviceEnv) if (!env.has(name)) out.push({ name, value });
  return out;
}
