// The kubelet's resource usage endpoints, for metrics-server and `kubectl top` (through it):
//   /metrics/resource  Prometheus text: node_cpu_usage_seconds_total, node_memory_working_set_bytes,
//                      and per container and per pod cpu_usage_seconds_total,
//                      memory_working_set_bytes, container_start_time_seconds, resource_scrape_error
//   /stats/summary     the Summary API's JSON (stats/v1alpha1): the node and each pod with its
//                      containers, cpu (usageCoreNanoSeconds, usageNanoCores) and memory
//                      (workingSetBytes, usageBytes, availableBytes for the node); the node's fs
//                      (the root directory's), runtime.imageFs and rlimit; each pod's volume and
//                      ephemeral-storage, each container's rootfs (writable layer) and logs
//                      (ephemeral.ts)
//   /metrics/cadvisor  cAdvisor's series of the same figures, as Prometheus scrapes them:
//                      machine_cpu_cores, machine_memory_bytes, and per container (and for the
//                      root, id="/") container_cpu_usage_seconds_total,
//                      container_memory_working_set_bytes, container_memory_usage_bytes,
//                      container_start_time_seconds, labelled container, id, image, name,
//                      namespace, pod (id and name: the runtime's container ID, not the
//                      container's cgroup path as cAdvisor's)
// The containers' figures come from the runtime (CRI ListContainerStats; ListContainers for their
// start times), where the kubelet's come from cAdvisor or the same CRI call. The node's are the
// host's: CPU time from /proc/stat (every state but idle and iowait), memory from /proc/meminfo
// (usage MemTotal - MemFree, working set that less Inactive(file), available MemAvailable), the
// figures cAdvisor derives for the root cgroup. usageNanoCores is the rate since this kubelet's
// previous sample (absent on the first, as the kubelet's).
// With the container manager (cgroups.ts) as its cgroup source, the sampler also reads the
// Summary's system containers (node.systemContainers: "kubelet", "runtime", "misc", "pods", each
// from its cgroup as cAdvisor reads it, GetSystemContainersStats) and each pod's own cgroup, whose
// CPU, memory and swap stand for the pod's (addPodCPUMemoryStats; its containers' sums without one).
// A cgroup's usageNanoCores is the rate since the previous sample too, 0 on the first (cAdvisor's
// figure before its second housekeeping).
import { readFileSync, statfsSync } from 'node:fs';
import type { CRIClient } from './cri.js';
import { L_CONTAINER_NAME, L_POD_NAME, L_POD_NAMESPACE, L_POD_UID } from './podspec.js';
import type { PodStorage } from './ephemeral.js';
import type { CgroupUsage } from './cgroups.js';
import type { Logger } from '../client/log.js';

/** USER_HZ: the unit of /proc/stat's CPU times (100 on every Linux the kubelet runs on) */
const USER_HZ = 100;

export interface CPUSample {
  /** ms since the epoch */
  time: number;
  usageCoreNanoSeconds: number;
  usageNanoCores?: number;
}

export interface MemorySample {
  time: number;
  workingSetBytes: number;
  usageBytes?: number;
  availableBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

/** a cgroup's figures in the Summary's terms (cadvisorInfoToContainerStats): a system container's or a pod's */
export interface CgroupSample {
  /** the cgroup's creation, or the kubelet's start for its own (ms since the epoch) */
  startTime: number;
  cpu: CPUSample;
  memory: MemorySample;
  swap?: { time: number; swapUsageBytes: number; swapAvailableBytes?: number };
}

/** where the cgroups' figures come from (the container manager, cgroups.ts) */
export interface CgroupSource {
  /** the system containers' names and cgroups (those with a cgroup name) */
  systemContainers(): { name: string; cgroup: string }[];
  /** a cgroup's figures; undefined when it does not exist */
  usage(cgroup: string): CgroupUsage | undefined;
  /** the pod cgroups' figures by pod UID */
  podUsages(): Map<string, CgroupUsage>;
}

export interface ContainerSample {
  namespace: string;
  pod: string;
  podUID: string;
  container: string;
  /** the runtime's container ID and image (cAdvisor's id, name and image labels) */
  id?: string;
  image?: string;
  /** ms since the epoch */
  startTime: number;
  cpu?: CPUSample;
  memory?: MemorySample;
}

export interface ResourceSample {
  node: { cpu: CPUSample; memory: MemorySample };
  containers: ContainerSample[];
  /** the Summary's system containers (kubelet, runtime, misc, pods) whose cgroups could be read */
  systemContainers?: (CgroupSample & { name: string })[];
  /** the pods' own cgroups' figures, by pod UID: a pod's CPU and memory when it has one (else its containers' sums) */
  podCgroups?: Map<string, CgroupSample>;
  /** the runtime could not be asked (resource_scrape_error 1) */
  error?: string;
}

/** the host's CPU time in core-nanoseconds (/proc/stat's first line, idle and iowait left out) */
export function hostCPUNanos(stat = readFileSync('/proc/stat', 'utf8')): number {
  const f = stat.split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal
  const busy = (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0);
  return (busy / USER_HZ) * 1e9;
}

/** the host's memory as cAdvisor reads the root cgroup's: usage, working set, available (bytes) */
export function hostMemory(meminfo = readFileSync('/proc/meminfo', 'utf8')): { usageBytes: number; workingSetBytes: number; availableBytes: number } {
  const kb = (key: string): number => {
    const m = new RegExp(`^${key.replace(/[()]/g, '\\$&')}:\\s+(\\d+)`, 'm').exec(meminfo);
    return m ? Number(m[1]) * 1024 : 0;
  };
  const usage = kb('MemTotal') - kb('MemFree');
  return { usageBytes: usage, workingSetBytes: Math.max(0, usage - kb('Inactive(file)')), availableBytes: kb('MemAvailable') };
}

/** samples the node and its containers; the previous sample gives the CPU rates */
export class ResourceSampler {
  private prev = new Map<string, { time: number; nanos: number }>();
  /** image ID -> its first name (the runtime lists containers by image ID; cAdvisor labels them by name) */
  private imageNames = new Map<string, string>();

  /** when this sampler was made: the "kubelet" system container's start (the summary provider's creation) */
  private readonly created = Date.now();

  constructor(
    private readonly cri: Pick<CRIClient, 'listContainerStats' | 'listContainers' | 'listImages'>,
    /** the cgroups' figures: the system containers, and the pods' own (none: the pods are their containers' sums) */
    private readonly cgroups?: CgroupSource,
    private readonly log?: Logger,
  ) {}

  /** a cgroup's figures as the Summary gives them; the CPU rate since the last sample of the cgroup (0 on the first, as cAdvisor's before its second) */
  private cgroupSample(u: CgroupUsage, seen: Set<string>, key: string): CgroupSample {
    const cpu: CPUSample = { time: u.time, usageCoreNanoSeconds: 0, usageNanoCores: 0 };
    if (u.cpuNanos !== undefined) {
      const c = this.cpu(key, u.time, u.cpuNanos);
      cpu.usageCoreNanoSeconds = c.usageCoreNanoSeconds;
      cpu.usageNanoCores = c.usageNanoCores ?? 0;
      seen.add(key);
    }
    const m = u.memory;
    if (!m) return { startTime: u.creationTime, cpu, memory: { time: u.time, workingSetBytes: 0 } };
    const memory: MemorySample = { time: u.time, workingSetBytes: m.workingSetBytes, usageBytes: m.usageBytes, rssBytes: m.rssBytes, pageFaults: m.pageFaults, majorPageFaults: m.majorPageFaults };
    // (availableBytes: the limit less the working set, when limited)
    if (m.limitBytes !== undefined) memory.availableBytes = Math.max(0, m.limitBytes - m.workingSetBytes);
    const swap: CgroupSample['swap'] = { time: u.time, swapUsageBytes: m.swapBytes };
    if (m.swapLimitBytes !== undefined) swap.swapAvailableBytes = Math.max(0, m.swapLimitBytes - m.swapBytes);
    return { startTime: u.creationTime, cpu, memory, swap };
  }

  /** the system containers (GetSystemContainersStats): those whose cgroup cannot be read are logged and left out */
  private systemContainers(seen: Set<string>): (CgroupSample & { name: string })[] {
    const out: (CgroupSample & { name: string })[] = [];
    for (const { name, cgroup } of this.cgroups?.systemContainers() ?? []) {
      let u: CgroupUsage | undefined;
      try {
        u = this.cgroups!.usage(cgroup);
      } catch {
        u = undefined;
      }
      if (!u) {
        const q = JSON.stringify(cgroup);
        this.log?.error(new Error(`failed to get cgroup stats for ${q}: failed to get container info for ${q}: unknown container ${q}`), 'Failed to get system container stats', { containerName: cgroup });
        continue;
      }
      const cs = this.cgroupSample(u, seen, `cgroup:${cgroup}`);
      // (the kubelet's own start is known: the summary provider's creation)
      out.push({ name, ...cs, startTime: name === 'kubelet' ? this.created : cs.startTime });
    }
    return out;
  }

  /** the name of an image ID, asking the runtime again when one is not known yet */
  private async imageName(ids: string[]): Promise<(id: string) => string> {
    if (ids.some((id) => id && !this.imageNames.has(id))) {
      try {
        for (const i of await this.cri.listImages()) {
          const name = i.repoTags?.[0] ?? i.repoDigests?.[0];
          if (i.id && name) this.imageNames.set(String(i.id), String(name));
        }
      } catch {
        /* the IDs stand for their images */
      }
    }
    return (id) => this.imageNames.get(id) ?? id;
  }

  /** a CPU sample with its rate since the last one of the same key */
  private cpu(key: string, time: number, nanos: number): CPUSample {
    const p = this.prev.get(key);
    this.prev.set(key, { time, nanos });
    const s: CPUSample = { time, usageCoreNanoSeconds: nanos };
    if (p && time > p.time && nanos >= p.nanos) s.usageNanoCores = Math.round(((nanos - p.nanos) / (time - p.time)) * 1e6);
    return s;
  }

  async sample(): Promise<ResourceSample> {
    const now = Date.now();
    const mem = hostMemory();
    const out: ResourceSample = { node: { cpu: this.cpu('', now, hostCPUNanos()), memory: { time: now, ...mem } }, containers: [] };
    try {
      const [stats, containers] = await Promise.all([this.cri.listContainerStats(), this.cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } })]);
      const created = new Map(containers.map((c) => [c.id ?? '', Math.floor((c.createdAt ?? 0) / 1e6)]));
      const imageIDs = new Map(containers.map((c) => [c.id ?? '', String(c.image?.image || c.imageRef || '')]));
      const nameOf = await this.imageName([...imageIDs.values()]);
      const images = new Map([...imageIDs].map(([id, image]) => [id, nameOf(image)]));
      const seen = new Set<string>(['']);
      for (const st of stats) {
        const id = st.attributes?.id ?? '';
        // (only running containers: the kubelet reports no stats for exited ones)
        if (!created.has(id)) continue;
        const l = st.attributes?.labels ?? {};
        const c: ContainerSample = { namespace: l[L_POD_NAMESPACE] ?? '', pod: l[L_POD_NAME] ?? '', podUID: l[L_POD_UID] ?? '', container: l[L_CONTAINER_NAME] ?? st.attributes?.metadata?.name ?? '', startTime: created.get(id)!, id, image: images.get(id) ?? '' };
        const cpuTime = st.cpu?.timestamp ? Math.floor(st.cpu.timestamp / 1e6) : now;
        if (st.cpu?.usageCoreNanoSeconds?.value !== undefined) {
          c.cpu = this.cpu(id, cpuTime, st.cpu.usageCoreNanoSeconds.value);
          seen.add(id);
        }
        if (st.memory?.workingSetBytes?.value !== undefined) {
          c.memory = { time: st.memory.timestamp ? Math.floor(st.memory.timestamp / 1e6) : now, workingSetBytes: st.memory.workingSetBytes.value };
          if (st.memory.usageBytes?.value !== undefined) c.memory.usageBytes = st.memory.usageBytes.value;
        }
        out.containers.push(c);
      }
      if (this.cgroups) {
        out.systemContainers = this.systemContainers(seen);
        // (the pods' own cgroups, as the kubelet's CRI stats provider reads them through cAdvisor)
        const uids = new Set(out.containers.map((c) => c.podUID));
        const pods = new Map<string, CgroupSample>();
        try {
          for (const [uid, u] of this.cgroups.podUsages()) if (uids.has(uid)) pods.set(uid, this.cgroupSample(u, seen, `pod:${uid}`));
        } catch {
          /* the containers' sums stand for them */
        }
        out.podCgroups = pods;
      }
      for (const k of this.prev.keys()) if (!seen.has(k)) this.prev.delete(k);
    } catch (e) {
      out.error = (e as Error).message;
    }
    return out;
  }
}

/** a Prometheus sample line: name{labels} value timestamp(ms) */
function line(name: string, labels: Record<string, string>, value: number, time: number): string {
  const l = Object.entries(labels)
    .map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`)
    .join(',');
  return `${name}${l ? `{${l}}` : ''} ${value} ${time}\n`;
}

/** a pod's containers and their sums: CPU time and working set, each at its latest sample's time */
interface PodTotals {
  namespace: string;
  pod: string;
  podUID: string;
  /** its first container's start (ms since the epoch) */
  startTime: number;
  containers: ContainerSample[];
  cpu?: { usageCoreNanoSeconds: number; time: number };
  memory?: { workingSetBytes: number; time: number };
  /** its own cgroup's figures, which stand for the sums when there */
  cgroup?: CgroupSample;
}

/** the containers grouped by pod, with each pod's sums (what /metrics/resource and /stats/summary report for a pod) */
function podTotals(containers: ContainerSample[], podCgroups?: Map<string, CgroupSample>): PodTotals[] {
  const pods = new Map<string, PodTotals>();
  for (const c of containers) {
    const key = `${c.namespace}/${c.pod}`;
    let p = pods.get(key);
    if (!p) pods.set(key, (p = { namespace: c.namespace, pod: c.pod, podUID: c.podUID, startTime: c.startTime, containers: [] }));
    p.startTime = Math.min(p.startTime, c.startTime);
    p.containers.push(c);
    if (c.cpu) {
      p.cpu ??= { usageCoreNanoSeconds: 0, time: 0 };
      p.cpu.usageCoreNanoSeconds += c.cpu.usageCoreNanoSeconds;
      p.cpu.time = Math.max(p.cpu.time, c.cpu.time);
    }
    if (c.memory) {
      p.memory ??= { workingSetBytes: 0, time: 0 };
      p.memory.workingSetBytes += c.memory.workingSetBytes;
      p.memory.time = Math.max(p.memory.time, c.memory.time);
    }
  }
  for (const p of pods.values()) {
    const cg = podCgroups?.get(p.podUID);
    if (!cg) continue;
    // (addPodCPUMemoryStats: the pod's cgroup first, its containers' sums only without one)
    p.cgroup = cg;
    p.cpu = { usageCoreNanoSeconds: cg.cpu.usageCoreNanoSeconds, time: cg.cpu.time };
    p.memory = { workingSetBytes: cg.memory.workingSetBytes, time: cg.memory.time };
  }
  return [...pods.values()];
}

/** /metrics/resource's text (the kubelet's resource metrics collector, its STABLE metrics) */
export function resourceMetricsText(s: ResourceSample): string {
  const families: [string, 'counter' | 'gauge', string, string[]][] = [
    ['container_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the container in core-seconds', []],
    ['container_memory_working_set_bytes', 'gauge', 'Current working set of the container in bytes', []],
    ['container_start_time_seconds', 'gauge', 'Start time of the container since unix epoch in seconds', []],
    ['node_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the node in core-seconds', []],
    ['node_memory_working_set_bytes', 'gauge', 'Current working set of the node in bytes', []],
    ['pod_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the pod in core-seconds', []],
    ['pod_memory_working_set_bytes', 'gauge', 'Current working set of the pod in bytes', []],
    ['resource_scrape_error', 'gauge', '1 if there was an error while getting container metrics, 0 otherwise', []],
  ];
  const lines = new Map(families.map((f) => [f[0], f[3]]));
  for (const c of s.containers) {
    const labels = { container: c.container, namespace: c.namespace, pod: c.pod };
    if (c.cpu) lines.get('container_cpu_usage_seconds_total')!.push(line('container_cpu_usage_seconds_total', labels, c.cpu.usageCoreNanoSeconds / 1e9, c.cpu.time));
    if (c.memory) lines.get('container_memory_working_set_bytes')!.push(line('container_memory_working_set_bytes', labels, c.memory.workingSetBytes, c.memory.time));
    lines.get('container_start_time_seconds')!.push(line('container_start_time_seconds', labels, c.startTime / 1000, c.startTime));
  }
  for (const p of podTotals(s.containers, s.podCgroups)) {
    const labels = { namespace: p.namespace, pod: p.pod };
    if (p.cpu) lines.get('pod_cpu_usage_seconds_total')!.push(line('pod_cpu_usage_seconds_total', labels, p.cpu.usageCoreNanoSeconds / 1e9, p.cpu.time));
    if (p.memory) lines.get('pod_memory_working_set_bytes')!.push(line('pod_memory_working_set_bytes', labels, p.memory.workingSetBytes, p.memory.time));
  }
  lines.get('node_cpu_usage_seconds_total')!.push(line('node_cpu_usage_seconds_total', {}, s.node.cpu.usageCoreNanoSeconds / 1e9, s.node.cpu.time));
  lines.get('node_memory_working_set_bytes')!.push(line('node_memory_working_set_bytes', {}, s.node.memory.workingSetBytes, s.node.memory.time));
  lines.get('resource_scrape_error')!.push(`resource_scrape_error ${s.error ? 1 : 0}\n`);
  let text = '';
  for (const [name, type, help] of families) {
    const ls = lines.get(name)!;
    if (ls.length === 0) continue;
    text += `# HELP ${name} [STABLE] ${help}\n# TYPE ${name} ${type}\n${ls.join('')}`;
  }
  return text;
}

/** /metrics/cadvisor: cAdvisor's container series (and the root's, id="/") from the same sample */
export function cadvisorMetricsText(s: ResourceSample, machine: { cores: number; memoryBytes: number }): string {
  const families: [string, 'counter' | 'gauge', string][] = [
    ['container_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed in seconds.'],
    ['container_memory_usage_bytes', 'gauge', 'Current memory usage in bytes, including all memory regardless of when it was accessed'],
    ['container_memory_working_set_bytes', 'gauge', 'Current working set in bytes.'],
    ['container_start_time_seconds', 'gauge', 'Start time of the container since unix epoch in seconds.'],
  ];
  const lines = new Map<string, string[]>(families.map((f) => [f[0], []]));
  const root = { container: '', id: '/', image: '', name: '', namespace: '', pod: '' };
  lines.get('container_cpu_usage_seconds_total')!.push(line('container_cpu_usage_seconds_total', root, s.node.cpu.usageCoreNanoSeconds / 1e9, s.node.cpu.time));
  if (s.node.memory.usageBytes !== undefined) lines.get('container_memory_usage_bytes')!.push(line('container_memory_usage_bytes', root, s.node.memory.usageBytes, s.node.memory.time));
  lines.get('container_memory_working_set_bytes')!.push(line('container_memory_working_set_bytes', root, s.node.memory.workingSetBytes, s.node.memory.time));
  for (const c of s.containers) {
    const labels = { container: c.container, id: `/${c.id ?? ''}`, image: c.image ?? '', name: c.id ?? '', namespace: c.namespace, pod: c.pod };
    if (c.cpu) lines.get('container_cpu_usage_seconds_total')!.push(line('container_cpu_usage_seconds_total', labels, c.cpu.usageCoreNanoSeconds / 1e9, c.cpu.time));
    if (c.memory?.usageBytes !== undefined) lines.get('container_memory_usage_bytes')!.push(line('container_memory_usage_bytes', labels, c.memory.usageBytes, c.memory.time));
    if (c.memory) lines.get('container_memory_working_set_bytes')!.push(line('container_memory_working_set_bytes', labels, c.memory.workingSetBytes, c.memory.time));
    lines.get('container_start_time_seconds')!.push(line('container_start_time_seconds', labels, c.startTime / 1000, c.startTime));
  }
  let text = `# HELP machine_cpu_cores Number of logical CPU cores.\n# TYPE machine_cpu_cores gauge\nmachine_cpu_cores ${machine.cores}\n`;
  text += `# HELP machine_memory_bytes Amount of memory installed on the machine.\n# TYPE machine_memory_bytes gauge\nmachine_memory_bytes ${machine.memoryBytes}\n`;
  for (const [name, type, help] of families) {
    const ls = lines.get(name)!;
    if (ls.length) text += `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${ls.join('')}`;
  }
  return text;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1Z');

function cpuJSON(c: CPUSample): Record<string, unknown> {
  return { time: iso(c.time), ...(c.usageNanoCores !== undefined ? { usageNanoCores: c.usageNanoCores } : {}), usageCoreNanoSeconds: c.usageCoreNanoSeconds };
}

function memJSON(m: MemorySample): Record<string, unknown> {
  const o: Record<string, unknown> = { time: iso(m.time) };
  if (m.availableBytes !== undefined) o.availableBytes = m.availableBytes;
  if (m.usageBytes !== undefined) o.usageBytes = m.usageBytes;
  o.workingSetBytes = m.workingSetBytes;
  if (m.rssBytes !== undefined) o.rssBytes = m.rssBytes;
  if (m.pageFaults !== undefined) o.pageFaults = m.pageFaults;
  if (m.majorPageFaults !== undefined) o.majorPageFaults = m.majorPageFaults;
  return o;
}

function swapJSON(w: NonNullable<CgroupSample['swap']>): Record<string, unknown> {
  return { time: iso(w.time), ...(w.swapAvailableBytes !== undefined ? { swapAvailableBytes: w.swapAvailableBytes } : {}), swapUsageBytes: w.swapUsageBytes };
}

/** a system container (stats/v1alpha1 ContainerStats, without file systems) */
function systemContainerJSON(c: CgroupSample & { name: string }): Record<string, unknown> {
  return { name: c.name, startTime: iso(c.startTime), cpu: cpuJSON(c.cpu), memory: memJSON(c.memory), ...(c.swap ? { swap: swapJSON(c.swap) } : {}) };
}

/** a file system's figures (stats/v1alpha1 FsStats), from statfs */
export interface FsStats {
  time: number;
  availableBytes: number;
  capacityBytes: number;
  usedBytes: number;
  inodesFree: number;
  inodes: number;
  inodesUsed: number;
}

/** the file system holding `path` */
export function fsStatsOf(path: string, time = Date.now()): FsStats | undefined {
  try {
    const st = statfsSync(path);
    return {
      time,
      availableBytes: st.bavail * st.bsize,
      capacityBytes: st.blocks * st.bsize,
      usedBytes: (st.blocks - st.bfree) * st.bsize,
      inodesFree: st.ffree,
      inodes: st.files,
      inodesUsed: st.files - st.ffree,
    };
  } catch {
    return undefined;
  }
}

/** the node's process limit and count (kernel.pid_max, the tasks of /proc/loadavg), as the kubelet's rlimit stats */
export function processLimits(): { maxpid: number; curproc: number } | undefined {
  try {
    const maxpid = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim());
    const curproc = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[3]?.split('/')[1]);
    return maxpid > 0 && curproc >= 0 ? { maxpid, curproc } : undefined;
  } catch {
    return undefined;
  }
}

/** what /stats/summary tells of storage: the node's file systems, its process limits, each pod's use (ephemeral.ts) */
export interface StorageSummary {
  /** the file system of the kubelet's root directory */
  nodeFs?: FsStats;
  /** the runtime's image file system: its use as the runtime counts it, the rest from statfs */
  imageFs?: FsStats;
  rlimit?: { time: number; maxpid: number; curproc: number };
  /** by pod UID */
  pods: Map<string, PodStorage>;
}

function fsJSON(f: FsStats, used?: { usedBytes: number; inodesUsed?: number }): Record<string, unknown> {
  const o: Record<string, unknown> = { time: iso(f.time), availableBytes: f.availableBytes, capacityBytes: f.capacityBytes, usedBytes: used ? used.usedBytes : f.usedBytes, inodesFree: f.inodesFree, inodes: f.inodes };
  if (!used) o.inodesUsed = f.inodesUsed;
  else if (used.inodesUsed !== undefined) o.inodesUsed = used.inodesUsed;
  return o;
}

/**
 * /stats/summary's JSON (stats/v1alpha1 Summary): the node (CPU, memory, its file systems and
 * process limits) and its pods (CPU, memory, their containers' writable layers and logs, their
 * volumes and ephemeral storage)
 */
export function summaryJSON(s: ResourceSample, nodeName: string, nodeStartTime: number, storage?: StorageSummary): Record<string, unknown> {
  const nodeFs = storage?.nodeFs;
  const imageFs = storage?.imageFs ?? nodeFs;
  return {
    node: {
      nodeName,
      systemContainers: (s.systemContainers ?? []).map(systemContainerJSON),
      startTime: iso(nodeStartTime),
      cpu: cpuJSON(s.node.cpu),
      memory: memJSON(s.node.memory),
      ...(nodeFs ? { fs: fsJSON(nodeFs) } : {}),
      ...(storage?.imageFs ? { runtime: { imageFs: fsJSON(storage.imageFs), containerFs: fsJSON(storage.imageFs) } } : {}),
      ...(storage?.rlimit ? { rlimit: { time: iso(storage.rlimit.time), maxpid: storage.rlimit.maxpid, curproc: storage.rlimit.curproc } } : {}),
    },
    pods: podTotals(s.containers, s.podCgroups).map((p) => {
      const st = storage?.pods.get(p.podUID);
      const byName = new Map(st?.containers.map((c) => [c.name, c]) ?? []);
      return {
        podRef: { name: p.pod, namespace: p.namespace, uid: p.podUID },
        startTime: iso(p.startTime),
        containers: p.containers.map((c) => {
          const cs = byName.get(c.container);
          return {
            name: c.container,
            startTime: iso(c.startTime),
            ...(c.cpu ? { cpu: cpuJSON(c.cpu) } : {}),
            ...(c.memory ? { memory: memJSON(c.memory) } : {}),
            ...(cs && imageFs ? { rootfs: fsJSON(imageFs, { usedBytes: cs.rootfsBytes }) } : {}),
            ...(cs && nodeFs ? { logs: fsJSON(nodeFs, { usedBytes: cs.logsBytes }) } : {}),
          };
        }),
        ...(p.cgroup
          ? { cpu: cpuJSON(p.cgroup.cpu), memory: memJSON(p.cgroup.memory) }
          : {
              ...(p.cpu ? { cpu: { time: iso(p.cpu.time), usageCoreNanoSeconds: p.cpu.usageCoreNanoSeconds } } : {}),
              ...(p.memory ? { memory: { time: iso(p.memory.time), workingSetBytes: p.memory.workingSetBytes } } : {}),
            }),
        ...(st && nodeFs && st.volumes.length ? { volume: st.volumes.map((v) => ({ ...fsJSON(nodeFs, v), name: v.name })) } : {}),
        ...(st && nodeFs ? { 'ephemeral-storage': fsJSON(nodeFs, { usedBytes: st.ephemeralBytes }) } : {}),
        ...(p.cgroup?.swap ? { swap: swapJSON(p.cgroup.swap) } : {}),
      };
    }),
  };
}
