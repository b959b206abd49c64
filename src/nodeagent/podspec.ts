// What the kubelet asks the container runtime for, made from a Pod: the sandbox's configuration
// (metadata, hostname, log directory, DNS, host ports, namespaces, sysctls) and each container's
// (image, command, environment, mounts, labels and annotations the kubelet finds its containers
// by again, log path, resources, security context), as kuberuntime_sandbox.go and
// kuberuntime_container.go make them. Pure functions of the pod and the node's settings.
import { readFileSync } from 'node:fs';
import { parseQuantity, quantityMilliValue, quantityValue } from '../schema/validation/quantity.js';

export const POD_LOGS_ROOT = '/var/log/pods';

// the labels and annotations the kubelet keeps on sandboxes and containers (kuberuntime/labels.go)
export const L_POD_NAME = 'io.kubernetes.pod.name';
export const L_POD_NAMESPACE = 'io.kubernetes.pod.namespace';
export const L_POD_UID = 'io.kubernetes.pod.uid';
export const L_CONTAINER_NAME = 'io.kubernetes.container.name';
export const L_CONTAINER_TYPE = 'io.kubernetes.container.type'; // (not Kubernetes': marks init and ephemeral containers)

/** a pod's init, regular or ephemeral container (spec.initContainers, containers, ephemeralContainers) */
export type ContainerKind = 'init' | 'regular' | 'ephemeral';

/** the field path of a container in its pod, as events name it (`spec.containers{web}`) */
export function containerFieldPath(kind: ContainerKind, name: string): string {
  return `spec.${kind === 'init' ? 'initContainers' : kind === 'ephemeral' ? 'ephemeralContainers' : 'containers'}{${name}}`;
}
export const A_HASH = 'io.kubernetes.container.hash';
export const A_RESTART_COUNT = 'io.kubernetes.container.restartCount';
export const A_TERMINATION_PATH = 'io.kubernetes.container.terminationMessagePath';
export const A_TERMINATION_POLICY = 'io.kubernetes.container.terminationMessagePolicy';
export const A_GRACE = 'io.kubernetes.pod.terminationGracePeriod';
export const A_PRESTOP = 'io.kubernetes.container.preStopHandler';

export interface NodeDNS {
  clusterDNS: string[];
  clusterDomain: string;
  resolvConf: string;
}

/** the directory of a pod's logs: /var/log/pods/<namespace>_<name>_<uid> */
export function podLogDir(pod: any, root = POD_LOGS_ROOT): string {
  return `${root}/${pod.metadata.namespace}_${pod.metadata.name}_${pod.metadata.uid}`;
}

/**
 * 32-bit FNV-1a of the container's spec less its resources and resize policy: a change of it
 * restarts the container, as the kubelet's hash does; a change of the resources is an in-place
 * resize (pods.ts), not a restart
 */
export function containerHash(container: any): string {
  const { resources: _r, resizePolicy: _p, ...rest } = container ?? {};
  const text = JSON.stringify(rest);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16);
}

/** the host's resolver settings (--resolv-conf) */
export function hostResolvConf(path: string): { servers: string[]; searches: string[]; options: string[] } {
  const out = { servers: [] as string[], searches: [] as string[], options: [] as string[] };
  if (!path) return out;
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return out;
  }
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const [key, ...rest] = line.split(/\s+/);
    if (key === 'nameserver' && rest[0]) out.servers.push(rest[0]);
    else if (key === 'search') out.searches = rest;
    else if (key === 'options') out.options.push(...rest);
  }
  return out;
}

/**
 * The pod's DNS settings by its dnsPolicy (pkg/kubelet/network/dns): ClusterFirst (on the pod
 * network) uses --cluster-dns with the cluster's search domains, and falls back to the host's
 * settings when no --cluster-dns is set (`missingClusterDNS`, an event then); Default the host's;
 * None only spec.dnsConfig, which the others append to.
 */
export function dnsConfigFor(pod: any, dns: NodeDNS): { config: { servers: string[]; searches: string[]; options: string[] }; missingClusterDNS: boolean } {
  const spec = pod.spec ?? {};
  let policy: string = spec.dnsPolicy || 'ClusterFirst';
  if (policy === 'ClusterFirst' && spec.hostNetwork) policy = 'Default';
  if (policy === 'ClusterFirstWithHostNet') policy = 'ClusterFirst';
  let missingClusterDNS = false;
  if (policy === 'ClusterFirst' && dns.clusterDNS.length === 0) {
    policy = 'Default';
    missingClusterDNS = true;
  }
  let config = { servers: [] as string[], searches: [] as string[], options: [] as string[] };
  const host = hostResolvConf(dns.resolvConf);
  if (policy === 'ClusterFirst') {
    const d = dns.clusterDomain;
    const searches = d ? [`${pod.metadata.namespace}.svc.${d}`, `svc.${d}`, d] : [];
    config = { servers: [...dns.clusterDNS], searches: [...searches, ...host.searches], options: ['ndots:5'] };
  } else if (policy === 'Default') {
    config = host;
  }
  const extra = spec.dnsConfig;
  if (extra) {
    for (const s of extra.nameservers ?? []) if (!config.servers.includes(s)) config.servers.push(s);
    for (const s of extra.searches ?? []) if (!config.searches.includes(s)) config.searches.push(s);
    for (const o of extra.options ?? []) {
      const text = o.value !== undefined ? `${o.name}:${o.value}` : o.name;
      config.options = config.options.filter((x) => x.split(':')[0] !== o.name);
      config.options.push(text);
    }
  }
  // (the resolver reads at most 3 servers and 32 search domains; the kubelet trims likewise)
  config.servers = config.servers.slice(0, 3);
  config.searches = config.searches.slice(0, 32);
  return { config, missingClusterDNS };
}

function namespaceOptions(spec: any): any {
  return {
    network: spec.hostNetwork ? 'NODE' : 'POD',
    pid: spec.hostPID ? 'NODE' : spec.shareProcessNamespace ? 'POD' : 'CONTAINER',
    ipc: spec.hostIPC ? 'NODE' : 'POD',
  };
}

function int64Value(v: unknown): { value: number } | undefined {
  return typeof v === 'number' ? { value: v } : undefined;
}

/**
 * the sandbox's configuration for attempt `attempt` of the pod; `cgroupParent` is the pod's cgroup
 * (cgroups.ts), '' without cgroupsPerQOS: the runtime's own placement
 */
export function sandboxConfig(pod: any, attempt: number, dns: { servers: string[]; searches: string[]; options: string[] }, logsRoot = POD_LOGS_ROOT, cgroupParent = '', clusterDomain = 'cluster.local'): any {
  const md = pod.metadata;
  const spec = pod.spec ?? {};
  const sc = spec.securityContext ?? {};
  let hostname: string = spec.hostname || md.name;
  if (hostname.length > 63) hostname = hostname.slice(0, 63).replace(/[-.]+$/, '');
  // (setHostnameAsFQDN with a subdomain: the kernel's host name is the pod's FQDN, as the kubelet's
  // GetNodenameForKernel makes it; longer than a host name may be, the sandbox is refused)
  if (spec.setHostnameAsFQDN === true && spec.subdomain) {
    const fqdn = `${hostname}.${spec.subdomain}.${md.namespace}.svc.${clusterDomain}`;
    if (fqdn.length > 64) throw new Error(`failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (64 characters is the max, ${fqdn.length} characters requested)`);
    hostname = fqdn;
  }
  const portMappings: any[] = [];
  for (const c of spec.containers ?? []) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort) continue;
      portMappings.push({ protocol: p.protocol || 'TCP', containerPort: p.containerPort, hostPort: p.hostPort, hostIp: p.hostIP ?? '' });
    }
  }
  const sysctls: Record<string, string> = {};
  for (const s of sc.sysctls ?? []) sysctls[s.name] = s.value;
  return {
    metadata: { name: md.name, uid: md.uid, namespace: md.namespace, attempt },
    hostname: spec.hostNetwork ? '' : hostname,
    logDirectory: podLogDir(pod, logsRoot),
    dnsConfig: dns,
    portMappings,
    labels: { ...(md.labels ?? {}), [L_POD_NAME]: md.name, [L_POD_NAMESPACE]: md.namespace, [L_POD_UID]: md.uid },
    annotations: { ...(md.annotations ?? {}) },
    linux: {
      cgroupParent,
      securityContext: {
        namespaceOptions: namespaceOptions(spec),
        runAsUser: int64Value(sc.runAsUser),
        runAsGroup: int64Value(sc.runAsGroup),
        // (the kubelet's order: fsGroup, then the pod's supplementalGroups)
        supplementalGroups: podGroups(sc),
        ...(sc.supplementalGroupsPolicy !== undefined ? { supplementalGroupsPolicy: sc.supplementalGroupsPolicy } : {}),
        ...seLinuxFor(sc.seLinuxOptions),
        readonlyRootfs: false,
        privileged: (spec.containers ?? []).some((c: any) => c.securityContext?.privileged) || (spec.initContainers ?? []).some((c: any) => c.securityContext?.privileged),
      },
      sysctls,
    },
  };
}

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

/**
 * The kubelet's apparmor.GetProfile: the container's appArmorProfile, else its deprecated
 * annotation (`runtime/default`, `unconfined`, `localhost/<name>`), else the pod's; undefined for none.
 */
export function appArmorProfileOf(pod: any, container: any): { type: string; localhostProfile?: string } | undefined {
  const own = container?.securityContext?.appArmorProfile;
  if (own && typeof own === 'object') return own;
  const a = pod?.metadata?.annotations?.[APPARMOR_ANNOTATION_PREFIX + container?.name];
  if (a === 'runtime/default') return { type: 'RuntimeDefault' };
  if (a === 'unconfined') return { type: 'Unconfined' };
  if (typeof a === 'string' && a.startsWith('localhost/')) return { type: 'Localhost', localhostProfile: a.slice('localhost/'.length) };
  const podProfile = pod?.spec?.securityContext?.appArmorProfile;
  return podProfile && typeof podProfile === 'object' ? podProfile : undefined;
}

/** whether a pod asks for AppArmor (apparmor.isRequired: a profile other than Unconfined, or an annotation other than unconfined) */
export function appArmorRequired(pod: any): boolean {
  const confined = (p: any) => p && typeof p === 'object' && p.type !== 'Unconfined';
  if (confined(pod?.spec?.securityContext?.appArmorProfile)) return true;
  for (const list of [pod?.spec?.initContainers, pod?.spec?.containers, pod?.spec?.ephemeralContainers]) {
    if (Array.isArray(list) && list.some((c: any) => confined(c?.securityContext?.appArmorProfile))) return true;
  }
  for (const [k, v] of Object.entries(pod?.metadata?.annotations ?? {})) if (k.startsWith(APPARMOR_ANNOTATION_PREFIX)) return v !== 'unconfined';
  return false;
}

/** a securityContext's seLinuxOptions for the runtime (the runtime ignores them where SELinux is off) */
function seLinuxFor(o: any): { selinuxOptions?: { user: string; role: string; type: string; level: string } } {
  if (!o || typeof o !== 'object') return {};
  return { selinuxOptions: { user: o.user ?? '', role: o.role ?? '', type: o.type ?? '', level: o.level ?? '' } };
}

/** the container's AppArmor profile for the runtime, with its deprecated string form (getAppArmorProfile) */
function appArmorFor(pod: any, container: any): { apparmor: { profileType: string; localhostRef?: string }; apparmorProfile: string } | undefined {
  const p = appArmorProfileOf(pod, container);
  if (!p) return undefined;
  if (p.type === 'RuntimeDefault') return { apparmor: { profileType: 'RuntimeDefault' }, apparmorProfile: 'runtime/default' };
  if (p.type === 'Unconfined') return { apparmor: { profileType: 'Unconfined' }, apparmorProfile: 'unconfined' };
  if (p.type === 'Localhost') return { apparmor: { profileType: 'Localhost', localhostRef: p.localhostProfile ?? '' }, apparmorProfile: `localhost/${p.localhostProfile ?? ''}` };
  return undefined;
}

/**
 * The supplemental groups the kubelet gives a pod's sandbox and containers: the pod's fsGroup
 * first (its volumes are made group-owned by it), then its supplementalGroups.
 */
function podGroups(psc: any): number[] {
  return [...(psc.fsGroup !== undefined && psc.fsGroup !== null ? [psc.fsGroup] : []), ...(psc.supplementalGroups ?? [])];
}

/** a resource quantity in milli-units (0 when absent) */
export function milli(resources: Record<string, string> | undefined, name: string): number {
  const q = resources?.[name] !== undefined ? parseQuantity(resources[name]) : null;
  return q ? Number(quantityMilliValue(q)) : 0;
}
export function value(resources: Record<string, string> | undefined, name: string): number {
  const q = resources?.[name] !== undefined ? parseQuantity(resources[name]) : null;
  return q ? Number(quantityValue(q)) : 0;
}

/** the pod's QoS class (pkg/apis/core/v1/helper/qos) */
export function qosClass(pod: any): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const all = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of all) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    for (const r of ['cpu', 'memory']) {
      if (req[r] !== undefined || lim[r] !== undefined) any = true;
      const l = lim[r];
      const q = req[r] ?? l;
      if (l === undefined || q === undefined || milli(req[r] !== undefined ? req : lim, r) !== milli(lim, r)) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** the OOM score adjustment of a container (pkg/kubelet/qos/policy.go) */
export function oomScoreAdj(pod: any, container: any, memoryCapacity: number): number {
  const qos = qosClass(pod);
  if (qos === 'Guaranteed') return -997;
  if (qos === 'BestEffort') return 1000;
  const request = value(container.resources?.requests, 'memory');
  const adj = 1000 - Math.floor((1000 * request) / Math.max(1, memoryCapacity));
  return Math.min(999, Math.max(2, adj));
}

const DEFAULT_MASKED_PATHS = ['/proc/asound', '/proc/acpi', '/proc/kcore', '/proc/keys', '/proc/latency_stats', '/proc/timer_list', '/proc/timer_stats', '/proc/sched_debug', '/proc/scsi', '/sys/firmware', '/sys/devices/virtual/powercap'];
const DEFAULT_READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

export interface ContainerSettings {
  cpuCFSQuota: boolean;
  cpuCFSQuotaPeriodUs: number;
  memoryCapacity: number;
  seccompDefault: boolean;
  /**
   * memory.oom.group=1 in each container's cgroup, so that the OOM killer ends the whole container
   * rather than one of its processes: on a cgroup v2 host unless singleProcessOOMKill is true (on
   * v1 the kernel has no such setting and the kubelet always kills a single process)
   */
  memoryOOMGroup?: boolean;
}

/**
 * The CRI LinuxContainerResources of a container's requirements (the kubelet's
 * generateLinuxContainerResources): CPU shares from the request, the CFS quota from the limit, the
 * memory limit and the OOM score adjustment, and on cgroup v2 memory.oom.group; for
 * CreateContainer and UpdateContainerResources.
 */
export function linuxResources(pod: any, container: any, s: ContainerSettings): any {
  const limits = container.resources?.limits ?? {};
  const requests = container.resources?.requests ?? {};
  const cpuRequest = milli(requests, 'cpu') || milli(limits, 'cpu');
  const cpuLimit = milli(limits, 'cpu');
  const memLimit = value(limits, 'memory');
  const resources: any = {
    cpuShares: cpuRequest ? Math.max(2, Math.floor((cpuRequest * 1024) / 1000)) : 2,
    memoryLimitInBytes: memLimit,
    oomScoreAdj: oomScoreAdj(pod, container, s.memoryCapacity),
  };
  if (cpuLimit && s.cpuCFSQuota) {
    resources.cpuPeriod = s.cpuCFSQuotaPeriodUs;
    resources.cpuQuota = Math.max(1000, Math.floor((cpuLimit * s.cpuCFSQuotaPeriodUs) / 1000));
  }
  if (s.memoryOOMGroup) resources.unified = { 'memory.oom.group': '1' };
  return resources;
}

/** the container's configuration (generateContainerConfig) */
export function containerConfig(
  pod: any,
  container: any,
  attempt: number,
  image: string,
  env: { name: string; value: string }[],
  command: { command: string[]; args: string[] },
  mounts: any[],
  kind: ContainerKind,
  s: ContainerSettings,
  /** an ephemeral container's targetContainerName, running: its PID namespace is that container's */
  targetId?: string,
): any {
  const md = pod.metadata;
  const spec = pod.spec ?? {};
  const psc = spec.securityContext ?? {};
  const csc = container.securityContext ?? {};
  const resources = linuxResources(pod, container, s);
  const privileged = !!csc.privileged;
  const seccompType = csc.seccompProfile?.type ?? psc.seccompProfile?.type ?? (s.seccompDefault ? 'RuntimeDefault' : 'Unconfined');
  const seccomp =
    seccompType === 'Localhost'
      ? { profileType: 'Localhost', localhostRef: csc.seccompProfile?.localhostProfile ?? psc.seccompProfile?.localhostProfile ?? '' }
      : { profileType: seccompType === 'RuntimeDefault' ? 'RuntimeDefault' : 'Unconfined' };
  const nsOptions = namespaceOptions(spec);
  // (the kubelet's generateLinuxContainerConfig: a target's PID namespace unless the pod shares one)
  if (targetId !== undefined && nsOptions.pid === 'CONTAINER') Object.assign(nsOptions, { pid: 'TARGET', targetId });
  const securityContext: any = {
    capabilities: { addCapabilities: csc.capabilities?.add ?? [], dropCapabilities: csc.capabilities?.drop ?? [] },
    privileged,
    namespaceOptions: nsOptions,
    runAsUser: int64Value(csc.runAsUser ?? psc.runAsUser),
    runAsGroup: int64Value(csc.runAsGroup ?? psc.runAsGroup),
    readonlyRootfs: !!csc.readOnlyRootFilesystem,
    supplementalGroups: podGroups(psc),
    ...(psc.supplementalGroupsPolicy !== undefined ? { supplementalGroupsPolicy: psc.supplementalGroupsPolicy } : {}),
    noNewPrivs: csc.allowPrivilegeEscalation === false,
    maskedPaths: privileged || csc.procMount === 'Unmasked' ? [] : DEFAULT_MASKED_PATHS,
    readonlyPaths: privileged || csc.procMount === 'Unmasked' ? [] : DEFAULT_READONLY_PATHS,
    seccomp,
    ...appArmorFor(pod, container),
    // (the effective securityContext's: the container's options whole, else the pod's)
    ...seLinuxFor(csc.seLinuxOptions ?? psc.seLinuxOptions),
  };
  return {
    metadata: { name: container.name, attempt },
    image: { image, userSpecifiedImage: container.image },
    command: command.command,
    args: command.args,
    workingDir: container.workingDir ?? '',
    envs: env.map((e) => ({ key: e.name, value: Buffer.from(e.value) })),
    mounts,
    labels: { [L_POD_NAME]: md.name, [L_POD_NAMESPACE]: md.namespace, [L_POD_UID]: md.uid, [L_CONTAINER_NAME]: container.name, [L_CONTAINER_TYPE]: kind },
    annotations: {
      [A_HASH]: containerHash(container),
      [A_RESTART_COUNT]: String(attempt),
      [A_TERMINATION_PATH]: container.terminationMessagePath || '/dev/termination-log',
      [A_TERMINATION_POLICY]: container.terminationMessagePolicy || 'File',
      [A_GRACE]: String(spec.terminationGracePeriodSeconds ?? 30),
    },
    logPath: `${container.name}/${attempt}.log`,
    stdin: !!container.stdin,
    stdinOnce: !!container.stdinOnce,
    tty: !!container.tty,
    linux: { resources, securityContext },
  };
}
