// The kubelet's resource usage endpoints, for metrics-server and `kubectl top` (through it):
//   /metrics/resource  Prometheus text: node_cpu_usage_seconds_total, node_memory_working_set_bytes,
//                      and per container and per pod cpu_usage_seconds_total,
//                      memory_working_set_bytes, container_start_time_seconds, resource_scrape_error
//   /stats/summary     the Summary API's JSON (stats/v1alpha1): the node and each pod with its
//                      containers, cpu (usageCoreNanoSeconds, usageNanoCores) and memory
//                      (workingSetBytes, usageBytes, availableBytes for the node); the node's fs
//                      (the root directory's), runtime.imageFs and rlimit; each pod's volume and
//                      ephemeral-storage, each container's rootfs (writable layer) and logs
//                      (ephemeral.ts). Every time is a metav1.Time: RFC 3339 to the second. The
//                      node's startTime is the machine's boot (/proc/stat's btime, the summary
//                      provider's systemBootTime), or with only_cpu_and_memory the root cgroup's
//                      making (GetCPUAndMemoryStats' rootStats.StartTime); a pod's is its
//                      sandbox's creation (the CRI stats provider's buildPodStats); a container's
//                      its creation
//   /metrics/cadvisor  the series of the kubelet's cAdvisor collectors (cadvisorMetricsText): for the
//                      root "/", every cgroup at and under the system containers' (cAdvisor's raw
//                      cgroup whitelist: the pods' root with its QoS and pod cgroups, the kubelet's,
//                      the runtime's, the system's) and the runtime's running containers and ready
//                      sandboxes wherever their cgroups are; labelled as the kubelet's
//                      containerPrometheusLabelsFunc labels them (id the cgroup, name the runtime's
//                      ID, image, and pod, namespace, container from the runtime's labels or, for a
//                      pod cgroup, its pod); and the machine's series
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
// figure before its second housekeeping). cAdvisor's series are read at each scrape (cAdvisor reads
// them at its housekeeping); a container's cgroup is its runtime spec's cgroupsPath (the verbose
// CRI status), asked once per container.
import { readdirSync, readFileSync, statfsSync } from 'node:fs';
import { cpus, totalmem, uptime } from 'node:os';
import type { Container, CRIClient, PodSandbox } from './cri.js';
import { L_CONTAINER_NAME, L_POD_NAME, L_POD_NAMESPACE, L_POD_UID } from './podspec.js';
import type { PodStorage } from './ephemeral.js';
import { podUIDOf, type CgroupDetail, type CgroupUsage } from './cgroups.js';
import type { Logger } from '../client/log.js';
import { goFloat } from '../machinery/gostrings.js';

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
  /** the cgroup and those under it (cgroupfs names), parents first: cAdvisor's raw containers below a watched cgroup */
  tree?(cgroup: string): string[];
  /** a cgroup's spec and further stats (/metrics/cadvisor); undefined when it does not exist */
  detail?(cgroup: string): CgroupDetail | undefined;
}

export interface ContainerSample {
  namespace: string;
  pod: string;
  podUID: string;
  container: string;
  /** the runtime's container ID and image (cAdvisor's name and image labels) */
  id?: string;
  image?: string;
  /** its pod sandbox's ID (the pod's start: the sandbox's creation) */
  sandboxId?: string;
  /** ms since the epoch */
  startTime: number;
  cpu?: CPUSample;
  memory?: MemorySample;
}

/** one of cAdvisor's containers as /metrics/cadvisor gives it: a runtime's container, or a raw cgroup (the root, the QoS and pod cgroups, the system containers) */
export interface CadvisorContainer {
  /** the cgroup (cgroupfs name): the id label */
  id: string;
  /** the runtime's container ID ("" for a raw cgroup): the name label (cAdvisor's first alias) */
  name: string;
  image: string;
  namespace: string;
  pod: string;
  container: string;
  /** container_start_time_seconds (ms): the runtime's creation of a container, a raw cgroup's making */
  startTime: number;
  usage: CgroupUsage;
  detail?: CgroupDetail;
}

/** cAdvisor's machine info (the machine_* series and their labels) */
export interface MachineInfo {
  /** when read (ms since the epoch) */
  time: number;
  cores: number;
  physicalCores: number;
  sockets: number;
  memoryBytes: number;
  swapBytes: number;
  machineID: string;
  systemUUID: string;
  bootID: string;
}

export interface ResourceSample {
  node: {
    cpu: CPUSample;
    memory: MemorySample;
    /** the machine's boot (ms since the epoch): the Summary's node startTime */
    bootTime?: number;
    /** the root cgroup's making as cAdvisor tells it: the node startTime of ?only_cpu_and_memory=true */
    rootStartTime?: number;
  };
  containers: ContainerSample[];
  /** the Summary's system containers (kubelet, runtime, misc, pods) whose cgroups could be read */
  systemContainers?: (CgroupSample & { name: string })[];
  /** the pods' own cgroups' figures, by pod UID: a pod's CPU and memory when it has one (else its containers' sums) */
  podCgroups?: Map<string, CgroupSample>;
  /** the pods' sandboxes by ID: the pods' starts (the sandboxes' creation) */
  sandboxes?: Map<string, { createdAt: number }>;
  /** cAdvisor's containers (asked for with { cadvisor: true }): the root, the cgroups under the system containers', the runtime's containers */
  cadvisor?: CadvisorContainer[];
  machine?: MachineInfo;
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

/** the machine's boot (ms since the epoch), as the kubelet's GetBootTime: /proc/stat's btime, else now less the uptime, to the second */
export function bootTime(stat?: string): number {
  try {
    const m = /^btime\s+(\d+)\s*$/m.exec(stat ?? readFileSync('/proc/stat', 'utf8'));
    if (m) return Number(m[1]) * 1000;
  } catch {
    /* the uptime below */
  }
  return Math.floor((Date.now() - uptime() * 1000) / 1000) * 1000;
}

/** a file's first line, trimmed ("" when it cannot be read) */
function firstLine(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n', 1)[0]!.trim();
  } catch {
    return '';
  }
}

/** the distinct values of a topology attribute over the CPUs of /sys/bus/cpu/devices */
function cpuTopologyCount(attr: string, dir = '/sys/bus/cpu/devices'): number {
  const seen = new Set<string>();
  try {
    for (const cpu of readdirSync(dir)) {
      const v = firstLine(`${dir}/${cpu}/topology/${attr}`);
      if (v !== '') seen.add(v);
    }
  } catch {
    /* none */
  }
  return seen.size;
}

/**
 * cAdvisor's machine info as the machine_* series give it: logical cores, physical cores (the
 * distinct "core id" lines of /proc/cpuinfo, else of the CPUs' topology), sockets (the distinct
 * "physical id" lines, else physical_package_id), MemTotal and SwapTotal, and the machine_id
 * (/etc/machine-id, else /var/lib/dbus/machine-id), system_uuid (the DMI product_uuid) and boot_id labels
 */
export function readMachineInfo(now = Date.now()): MachineInfo {
  let cpuinfo = '';
  let meminfo = '';
  try {
    cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    /* the topology below */
  }
  try {
    meminfo = readFileSync('/proc/meminfo', 'utf8');
  } catch {
    /* os.totalmem below */
  }
  const unique = (re: RegExp) => new Set(cpuinfo.match(re) ?? []).size;
  const kb = (key: string) => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(meminfo);
    return m ? Number(m[1]) * 1024 : undefined;
  };
  return {
    time: now,
    cores: cpus().length,
    physicalCores: unique(/^core id\s*:\s*\d+$/gm) || cpuTopologyCount('core_id'),
    sockets: unique(/^physical id\s*:\s*\d+$/gm) || cpuTopologyCount('physical_package_id'),
    memoryBytes: kb('MemTotal') ?? totalmem(),
    swapBytes: kb('SwapTotal') ?? 0,
    machineID: firstLine('/etc/machine-id') || firstLine('/var/lib/dbus/machine-id'),
    systemUUID: firstLine('/sys/class/dmi/id/product_uuid'),
    bootID: firstLine('/proc/sys/kernel/random/boot_id'),
  };
}

/**
 * a container's cgroup (cgroupfs name) from the runtime's runtimeSpec.linux.cgroupsPath: a path
 * as it is; the systemd driver's "<slice>:<prefix>:<name>" as the slices expand
 * (kubepods-burstable.slice → /kubepods.slice/kubepods-burstable.slice) with <prefix>-<name>.scope under them
 */
export function cgroupOfCgroupsPath(p: string): string | undefined {
  if (!p) return undefined;
  const parts = p.split(':');
  if (parts.length !== 3) return '/' + p.split('/').filter((x) => x !== '').join('/');
  const [slice, prefix, name] = parts as [string, string, string];
  let path = '';
  if (slice !== '' && slice !== '-.slice') {
    const words = slice.replace(/\.slice$/, '').split('-');
    for (let i = 1; i <= words.length; i++) path += `/${words.slice(0, i).join('-')}.slice`;
  }
  return `${path}/${prefix ? `${prefix}-${name}` : name}${name.endsWith('.scope') || name.endsWith('.slice') ? '' : '.scope'}`;
}

/** samples the node and its containers; the previous sample gives the CPU rates */
export class ResourceSampler {
  private prev = new Map<string, { time: number; nanos: number }>();
  /** image ID -> its first name (the runtime lists containers by image ID; cAdvisor labels them by name) */
  private imageNames = new Map<string, string>();

  /** when this sampler was made: the "kubelet" system container's start (the summary provider's creation) */
  private readonly created = Date.now();

  constructor(
    private readonly cri: Pick<CRIClient, 'listContainerStats' | 'listContainers' | 'listImages' | 'listPodSandbox' | 'containerStatus' | 'podSandboxStatus'>,
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

  /** the machine's boot, read once (it does not move) */
  private boot?: number;
  /** cAdvisor's machine info, read again every 5 minutes (its update_machine_info_interval) */
  private machine?: MachineInfo;
  /** the cgroups of the runtime's containers and sandboxes, by ID (null: the runtime did not tell) */
  private cgroupPaths = new Map<string, string | null>();

  /** the cgroup of a container or sandbox, from the runtime's verbose status (its runtime spec's cgroupsPath), remembered */
  private async cgroupOfRuntimeObject(id: string, sandbox: boolean): Promise<string | undefined> {
    let p = this.cgroupPaths.get(id);
    if (p === undefined) {
      p = null;
      try {
        const info = (sandbox ? await this.cri.podSandboxStatus(id, true) : await this.cri.containerStatus(id, true)).info ?? {};
        const parsed = JSON.parse(info['info'] ?? '{}');
        p = cgroupOfCgroupsPath(String(parsed?.runtimeSpec?.linux?.cgroupsPath ?? '')) ?? null;
      } catch {
        /* not told: left out, tried again next time */
        return undefined;
      }
      this.cgroupPaths.set(id, p);
    }
    return p ?? undefined;
  }

  /**
   * cAdvisor's containers as the kubelet's /metrics/cadvisor lists them: the root; every cgroup at
   * and under the system containers' cgroups (cAdvisor's raw cgroup whitelist: the pods' root, the
   * kubelet's, the runtime's, the system's), the pod cgroups labelled with their pods; and the
   * runtime's running containers and ready sandboxes (pause) wherever their cgroups are, with
   * their IDs (name), images and pod labels
   */
  private async cadvisorContainers(running: Container[], sandboxes: PodSandbox[], imageOf: (id: string) => string): Promise<CadvisorContainer[]> {
    const cg = this.cgroups!;
    const pods = new Map<string, { name: string; namespace: string }>();
    for (const sb of sandboxes) if (sb.metadata?.uid) pods.set(sb.metadata.uid, { name: sb.metadata.name ?? '', namespace: sb.metadata.namespace ?? '' });
    // the runtime's own: its containers and its sandboxes (the pause containers), by cgroup
    const known = new Map<string, Omit<CadvisorContainer, 'usage' | 'detail'>>();
    for (const c of running) {
      const id = c.id ?? '';
      const cgroup = id ? await this.cgroupOfRuntimeObject(id, false) : undefined;
      if (!cgroup) continue;
      const l = c.labels ?? {};
      known.set(cgroup, { id: cgroup, name: id, image: imageOf(String(c.image?.image || c.imageRef || '')), namespace: l[L_POD_NAMESPACE] ?? '', pod: l[L_POD_NAME] ?? '', container: l[L_CONTAINER_NAME] ?? '', startTime: Math.floor((c.createdAt ?? 0) / 1e6) });
    }
    for (const sb of sandboxes) {
      const id = sb.id ?? '';
      if (!id || sb.state !== 'SANDBOX_READY') continue;
      const cgroup = await this.cgroupOfRuntimeObject(id, true);
      if (!cgroup) continue;
      const l = sb.labels ?? {};
      known.set(cgroup, { id: cgroup, name: id, image: this.sandboxImages.get(id) ?? '', namespace: l[L_POD_NAMESPACE] ?? sb.metadata?.namespace ?? '', pod: l[L_POD_NAME] ?? sb.metadata?.name ?? '', container: l[L_CONTAINER_NAME] ?? '', startTime: Math.floor((sb.createdAt ?? 0) / 1e6) });
    }
    const liveIDs = new Set([...running.map((c) => c.id ?? ''), ...sandboxes.map((x) => x.id ?? '')]);
    for (const id of this.cgroupPaths.keys()) if (!liveIDs.has(id)) this.cgroupPaths.delete(id);
    const names = ['/'];
    for (const { cgroup } of cg.systemContainers()) for (const n of cg.tree?.(cgroup) ?? []) names.push(n);
    for (const k of known.keys()) names.push(k);
    const out: CadvisorContainer[] = [];
    const done = new Set<string>();
    for (const name of names) {
      if (done.has(name)) continue;
      done.add(name);
      let usage: CgroupUsage | undefined;
      let detail: CgroupDetail | undefined;
      try {
        usage = cg.usage(name);
        detail = usage && cg.detail?.(name);
      } catch {
        usage = undefined;
      }
      if (!usage) continue;
      const k = known.get(name);
      if (k) {
        out.push({ ...k, usage, detail });
        continue;
      }
      // (a raw cgroup: a pod's own is labelled with its pod, as the kubelet's GetPodByCgroupfs does)
      const parts = name.split('/');
      const uid = podUIDOf(parts[parts.length - 1] ?? '');
      const pod = uid !== undefined ? pods.get(uid) : undefined;
      out.push({ id: name, name: '', image: '', namespace: pod?.namespace ?? '', pod: pod?.name ?? '', container: '', startTime: usage.creationTime, usage, detail });
    }
    return out;
  }

  /** the sandboxes' images (the pause image), from their verbose status */
  private sandboxImages = new Map<string, string>();

  async sample(opts: { cadvisor?: boolean } = {}): Promise<ResourceSample> {
    const now = Date.now();
    const mem = hostMemory();
    this.boot ??= bootTime();
    const out: ResourceSample = { node: { cpu: this.cpu('', now, hostCPUNanos()), memory: { time: now, ...mem }, bootTime: this.boot }, containers: [] };
    if (this.cgroups) {
      try {
        out.node.rootStartTime = this.cgroups.usage('/')?.creationTime;
      } catch {
        /* the boot time stands for it */
      }
    }
    if (opts.cadvisor && (!this.machine || now - this.machine.time >= 5 * 60_000)) this.machine = readMachineInfo(now);
    if (opts.cadvisor) out.machine = this.machine;
    try {
      const [stats, containers] = await Promise.all([this.cri.listContainerStats(), this.cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } })]);
      let sandboxes: PodSandbox[] = [];
      try {
        sandboxes = await this.cri.listPodSandbox();
      } catch {
        /* the pods' first containers' starts stand for theirs */
      }
      out.sandboxes = new Map(sandboxes.filter((x) => x.id).map((x) => [x.id!, { createdAt: Math.floor((x.createdAt ?? 0) / 1e6) }]));
      const created = new Map(containers.map((c) => [c.id ?? '', Math.floor((c.createdAt ?? 0) / 1e6)]));
      const sandboxOf = new Map(containers.map((c) => [c.id ?? '', c.podSandboxId ?? '']));
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
        if (sandboxOf.get(id)) c.sandboxId = sandboxOf.get(id);
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
        if (opts.cadvisor) {
          // (the pause image of each ready sandbox not seen yet, from its verbose status)
          for (const sb of sandboxes) {
            if (!sb.id || sb.state !== 'SANDBOX_READY' || this.sandboxImages.has(sb.id)) continue;
            try {
              const info = JSON.parse((await this.cri.podSandboxStatus(sb.id, true)).info?.['info'] ?? '{}');
              this.sandboxImages.set(sb.id, String(info?.image ?? ''));
            } catch {
              /* asked again next time */
            }
          }
          for (const id of this.sandboxImages.keys()) if (!out.sandboxes.has(id)) this.sandboxImages.delete(id);
          out.cadvisor = await this.cadvisorContainers(containers, sandboxes, nameOf);
        }
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
  return `${name}${l ? `{${l}}` : ''} ${goFloat(value)} ${time}\n`;
}

/** a pod's containers and their sums: CPU time and working set, each at its latest sample's time */
interface PodTotals {
  namespace: string;
  pod: string;
  podUID: string;
  /** its sandbox's creation (ms since the epoch), as the kubelet's CRI stats provider tells (buildPodStats); its first container's start when the runtime did not tell */
  startTime: number;
  containers: ContainerSample[];
  cpu?: { usageCoreNanoSeconds: number; time: number };
  memory?: { workingSetBytes: number; time: number };
  /** its own cgroup's figures, which stand for the sums when there */
  cgroup?: CgroupSample;
}

/** the containers grouped by pod, with each pod's sums (what /metrics/resource and /stats/summary report for a pod) */
function podTotals(containers: ContainerSample[], podCgroups?: Map<string, CgroupSample>, sandboxes?: ResourceSample['sandboxes']): PodTotals[] {
  const pods = new Map<string, PodTotals>();
  const sandboxStart = new Map<string, number>();
  for (const c of containers) {
    const key = `${c.namespace}/${c.pod}`;
    let p = pods.get(key);
    if (!p) pods.set(key, (p = { namespace: c.namespace, pod: c.pod, podUID: c.podUID, startTime: c.startTime, containers: [] }));
    p.startTime = Math.min(p.startTime, c.startTime);
    const sb = c.sandboxId !== undefined ? sandboxes?.get(c.sandboxId) : undefined;
    if (sb && sb.createdAt > 0) sandboxStart.set(key, Math.max(sandboxStart.get(key) ?? 0, sb.createdAt));
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
  for (const [key, p] of pods) {
    // (the pod's sandbox's creation: the newest, were its containers in more than one)
    const sb = sandboxStart.get(key);
    if (sb !== undefined) p.startTime = sb;
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
  for (const p of podTotals(s.containers, s.podCgroups, s.sandboxes)) {
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


/** a family of /metrics/cadvisor: its samples as label sets (label names in order), values and timestamps */
interface Family {
  type: 'counter' | 'gauge';
  help: string;
  samples: { labels: [string, string][]; value: number; time?: number }[];
}

/** Prometheus' text exposition of families as client_golang's registry gathers them: families by name, each family's samples by their label values */
function exposition(families: Map<string, Family>): string {
  let text = '';
  for (const name of [...families.keys()].sort()) {
    const f = families.get(name)!;
    if (f.samples.length === 0) continue;
    const key = (x: Family['samples'][number]) => x.labels.map(([, v]) => v);
    const sorted = [...f.samples].sort((a, b) => {
      const ka = key(a);
      const kb = key(b);
      for (let i = 0; i < Math.min(ka.length, kb.length); i++) if (ka[i] !== kb[i]) return ka[i]! < kb[i]! ? -1 : 1;
      return (a.time ?? 0) - (b.time ?? 0);
    });
    text += `# HELP ${name} ${f.help}\n# TYPE ${name} ${f.type}\n`;
    for (const x of sorted) {
      const l = x.labels.map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`).join(',');
      text += `${name}${l ? `{${l}}` : ''} ${goFloat(x.value)}${x.time !== undefined ? ` ${Math.floor(x.time)}` : ''}\n`;
    }
  }
  return text;
}

/** a cgroup's memory limit as cAdvisor's spec series give it: above 2^62, unlimited, is 0 */
const specMemory = (v: number) => (v > 2 ** 62 ? 0 : v);

/**
 * /metrics/cadvisor: the series of the kubelet's cAdvisor collectors (cAdvisor's
 * metrics/prometheus.go and prometheus_machine.go, with the metric sets the kubelet's server
 * includes) that cgroup files honestly give: CPU (user, system, total with cpu="total", CFS
 * periods and throttling where a quota is set), memory (usage, working set, RSS, cache, swap,
 * mapped files, kernel, highest usage, limit hits, active and inactive files, page faults), the
 * container spec (start time, CPU shares, period and quota, memory limits), container_last_seen,
 * and the machine's cores, sockets, memory and swap. Each container is labelled as the kubelet's
 * containerPrometheusLabelsFunc labels it: id (its cgroup), name (the runtime's ID), image, pod,
 * namespace, container. Without cAdvisor's containers in the sample (no cgroup reader), the
 * runtime's containers stand alone, id their runtime IDs.
 */
export function cadvisorMetricsText(s: ResourceSample, machine?: { cores: number; memoryBytes: number }, now = Date.now()): string {
  const families = new Map<string, Family>();
  const fam = (name: string, type: Family['type'], help: string): Family => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { type, help, samples: [] }));
    return f;
  };
  const base = (c: { container: string; id: string; image: string; name: string; namespace: string; pod: string }): [string, string][] => [
    ['container', c.container],
    ['id', c.id],
    ['image', c.image],
    ['name', c.name],
    ['namespace', c.namespace],
    ['pod', c.pod],
  ];
  /** the base labels with extra ones, in label-name order (client_golang sorts them) */
  const withLabels = (b: [string, string][], extra: [string, string][]) => [...b, ...extra].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const add = (name: string, type: Family['type'], help: string, labels: [string, string][], value: number, time?: number) => fam(name, type, help).samples.push({ labels, value, time });
  const nowSec = Math.floor(now / 1000);
  const containers: CadvisorContainer[] =
    s.cadvisor ??
    [
      // (no cgroup reader: the host's figures for the root, the runtime's for its containers)
      { id: '/', name: '', image: '', namespace: '', pod: '', container: '', startTime: 0, usage: { time: s.node.cpu.time, creationTime: 0, cpuNanos: s.node.cpu.usageCoreNanoSeconds, memory: { usageBytes: s.node.memory.usageBytes ?? 0, workingSetBytes: s.node.memory.workingSetBytes, rssBytes: 0, pageFaults: 0, majorPageFaults: 0, swapBytes: 0 } } },
      ...s.containers.map((c) => ({
        id: `/${c.id ?? ''}`,
        name: c.id ?? '',
        image: c.image ?? '',
        namespace: c.namespace,
        pod: c.pod,
        container: c.container,
        startTime: c.startTime,
        usage: { time: c.cpu?.time ?? c.memory?.time ?? now, creationTime: c.startTime, cpuNanos: c.cpu?.usageCoreNanoSeconds, memory: c.memory ? { usageBytes: c.memory.usageBytes ?? 0, workingSetBytes: c.memory.workingSetBytes, rssBytes: 0, pageFaults: 0, majorPageFaults: 0, swapBytes: 0 } : undefined },
      })),
    ];
  for (const c of containers) {
    const b = base(c);
    const t = c.usage.time;
    const cpu = c.detail?.cpu;
    const mem = c.usage.memory;
    const md = c.detail?.memory;
    // the container spec (no timestamps)
    if (c.startTime > 0) add('container_start_time_seconds', 'gauge', 'Start time of the container since unix epoch in seconds.', b, Math.floor(c.startTime / 1000));
    if (cpu) {
      add('container_spec_cpu_period', 'gauge', 'CPU period of the container.', b, cpu.periodUs);
      if (cpu.quotaUs !== 0) add('container_spec_cpu_quota', 'gauge', 'CPU quota of the container.', b, cpu.quotaUs);
      add('container_spec_cpu_shares', 'gauge', 'CPU share of the container.', b, cpu.shares);
    }
    if (md) {
      add('container_spec_memory_limit_bytes', 'gauge', 'Memory limit for the container.', b, specMemory(md.limit));
      add('container_spec_memory_swap_limit_bytes', 'gauge', 'Memory swap limit for the container.', b, specMemory(md.swapLimit));
      add('container_spec_memory_reservation_limit_bytes', 'gauge', 'Memory reservation limit for the container.', b, specMemory(md.reservation));
    }
    // the stats, at the time they were read
    add('container_last_seen', 'gauge', 'Last time a container was seen by the exporter', b, nowSec, now);
    if (s.cadvisor) {
      add('container_cpu_user_seconds_total', 'counter', 'Cumulative user cpu time consumed in seconds.', b, (cpu?.userNanos ?? 0) / 1e9, t);
      add('container_cpu_system_seconds_total', 'counter', 'Cumulative system cpu time consumed in seconds.', b, (cpu?.systemNanos ?? 0) / 1e9, t);
    }
    // (no per-CPU figures: the kubelet leaves cAdvisor's PerCpuUsageMetrics out, so one "total" series, when above 0)
    if ((c.usage.cpuNanos ?? 0) > 0) add('container_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed in seconds.', withLabels(b, [['cpu', 'total']]), c.usage.cpuNanos! / 1e9, t);
    if (cpu && cpu.quotaUs !== 0) {
      add('container_cpu_cfs_periods_total', 'counter', 'Number of elapsed enforcement period intervals.', b, cpu.periods, t);
      add('container_cpu_cfs_throttled_periods_total', 'counter', 'Number of throttled period intervals.', b, cpu.throttledPeriods, t);
      add('container_cpu_cfs_throttled_seconds_total', 'counter', 'Total time duration the container has been throttled.', b, cpu.throttledNanos / 1e9, t);
    }
    if (s.cadvisor) {
      add('container_memory_cache', 'gauge', 'Number of bytes of page cache memory.', b, md?.cache ?? 0, t);
      add('container_memory_rss', 'gauge', 'Size of RSS in bytes.', b, mem?.rssBytes ?? 0, t);
      add('container_memory_kernel_usage', 'gauge', 'Size of kernel memory allocated in bytes.', b, md?.kernelUsage ?? 0, t);
      add('container_memory_mapped_file', 'gauge', 'Size of memory mapped files in bytes.', b, md?.mappedFile ?? 0, t);
      add('container_memory_swap', 'gauge', 'Container swap usage in bytes.', b, mem?.swapBytes ?? 0, t);
      add('container_memory_failcnt', 'counter', 'Number of memory usage hits limits', b, md?.failcnt ?? 0, t);
      add('container_memory_max_usage_bytes', 'gauge', 'Maximum memory usage recorded in bytes', b, md?.maxUsage ?? 0, t);
      add('container_memory_total_active_file_bytes', 'gauge', 'Current total active file in bytes.', b, md?.activeFile ?? 0, t);
      add('container_memory_total_inactive_file_bytes', 'gauge', 'Current total inactive file in bytes.', b, md?.inactiveFile ?? 0, t);
      for (const [type, scope, v] of [
        ['pgfault', 'container', mem?.pageFaults ?? 0],
        ['pgmajfault', 'container', mem?.majorPageFaults ?? 0],
        ['pgfault', 'hierarchy', mem?.pageFaults ?? 0],
        ['pgmajfault', 'hierarchy', mem?.majorPageFaults ?? 0],
      ] as const)
        add('container_memory_failures_total', 'counter', 'Cumulative count of memory allocation failures.', withLabels(b, [['failure_type', type], ['scope', scope]]), v, t);
    }
    if (mem) {
      add('container_memory_usage_bytes', 'gauge', 'Current memory usage in bytes, including all memory regardless of when it was accessed', b, mem.usageBytes, t);
      add('container_memory_working_set_bytes', 'gauge', 'Current working set in bytes.', b, mem.workingSetBytes, t);
    }
  }
  add('container_scrape_error', 'gauge', '1 if there was an error while getting container metrics, 0 otherwise', [], s.error ? 1 : 0);
  // the machine collector: its base labels, and the machine info's time
  const m: MachineInfo = s.machine ?? { time: now, cores: machine?.cores ?? cpus().length, physicalCores: 0, sockets: 0, memoryBytes: machine?.memoryBytes ?? totalmem(), swapBytes: 0, machineID: '', systemUUID: '', bootID: '' };
  const ml: [string, string][] = [
    ['boot_id', m.bootID],
    ['machine_id', m.machineID],
    ['system_uuid', m.systemUUID],
  ];
  add('machine_cpu_cores', 'gauge', 'Number of logical CPU cores.', ml, m.cores, m.time);
  if (s.machine) {
    add('machine_cpu_physical_cores', 'gauge', 'Number of physical CPU cores.', ml, m.physicalCores, m.time);
    add('machine_cpu_sockets', 'gauge', 'Number of CPU sockets.', ml, m.sockets, m.time);
    add('machine_swap_bytes', 'gauge', 'Amount of swap memory available on the machine.', ml, m.swapBytes, m.time);
  }
  add('machine_memory_bytes', 'gauge', 'Amount of memory installed on the machine.', ml, m.memoryBytes, m.time);
  add('machine_scrape_error', 'gauge', '1 if there was an error while getting machine metrics, 0 otherwise.', [], 0);
  return exposition(families);
}

/**
 * a metav1.Time as JSON: RFC 3339 in UTC to the second, the fraction dropped (Go's time.RFC3339
 * format truncates)
 */
export const iso = (ms: number): string | null => (Number.isFinite(ms) ? new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') : null);

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
    pods: podTotals(s.containers, s.podCgroups, s.sandboxes).map((p) => {
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
