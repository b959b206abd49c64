// The kubelet's cgroups (pkg/kubelet/cm with the cgroupfs driver): with cgroupsPerQOS (the
// default) the node's pods live under <cgroupRoot>/kubepods, Burstable pods under
// kubepods/burstable, BestEffort pods under kubepods/besteffort and Guaranteed pods directly under
// kubepods, each pod in a cgroup of its own, pod<uid>, whose name is the sandbox's cgroup parent
// (CRI LinuxPodSandboxConfig.cgroup_parent: the runtime puts the sandbox and the containers under
// it).
//
// - kubepods has the node's allocatable CPU shares, memory and pids when enforceNodeAllocatable has
//   "pods" (the capacity less --kube-reserved and --system-reserved), else the capacity's
//   (createNodeAllocatableCgroups, enforceNodeAllocatableCgroups);
// - kubepods/besteffort has 2 CPU shares, kubepods/burstable the shares of its pods' CPU requests,
//   set as a pod cgroup is made and every minute (qos_container_manager_linux.go);
// - a pod's cgroup has ResourceConfigForPod's CPU shares, CFS quota and memory limit, and
//   pids.max from podPidsLimit (pod_container_manager_linux.go EnsureExists); an in-place resize
//   changes it (widened before the containers grow, narrowed after they shrink);
// - the cgroups of pods this kubelet no longer has, under its own QoS cgroups, have their
//   processes killed and are removed (cleanupOrphanedPodCgroups).
//
// cgroup v1 (one hierarchy per controller: the pod's cgroup is made in each mounted one, cpuset's
// cpus and mems copied from the parent) and v2 (a cgroup2 file system at /sys/fs/cgroup: the
// controllers enabled in each parent's cgroup.subtree_control; cpu.weight, cpu.max, memory.max,
// pids.max) are told apart by what is mounted at /sys/fs/cgroup. The systemd driver is refused
// without systemd, in the words of runc's libcontainer, which the kubelet's cgroup manager uses.
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../client/log.js';
import { milli, qosClass, value } from './podspec.js';

export const MIN_SHARES = 2;
export const MAX_SHARES = 262144;
const SHARES_PER_CPU = 1024;
const MIN_QUOTA_PERIOD = 1000;
/** how often the QoS cgroups' settings are set again (periodicQOSCgroupUpdateInterval) */
export const QOS_UPDATE_INTERVAL_MS = 60_000;
const DEFAULT_NODE_ALLOCATABLE_CGROUP = 'kubepods';
const POD_PREFIX = 'pod';
export const CGROUP_MOUNT = '/sys/fs/cgroup';

/** USER_HZ: the unit of cpuacct.stat (libcontainer's clock ticks, 100 on every Linux the kubelet runs on) */
const USER_HZ = 100;

// ─────────────────────────────────────────────────────────────────────────────
// Pure computations (helpers_linux.go, qos_container_manager_linux.go, node_container_manager_linux.go)
// ─────────────────────────────────────────────────────────────────────────────

/** MilliCPUToShares: 2 at the least (also for no request), 262144 at the most */
export function milliCPUToShares(milliCPU: number): number {
  if (milliCPU <= 0) return MIN_SHARES;
  const shares = Math.floor((milliCPU * SHARES_PER_CPU) / 1000);
  return Math.min(MAX_SHARES, Math.max(MIN_SHARES, shares));
}

/** MilliCPUToQuota: the CFS quota of a CPU limit in a period (µs); 0 for no limit, 1000 at the least */
export function milliCPUToQuota(milliCPU: number, periodUs: number): number {
  if (milliCPU <= 0) return 0;
  return Math.max(MIN_QUOTA_PERIOD, Math.floor((milliCPU * periodUs) / 1000));
}

/** cgroup v2's cpu.weight for cpu.shares (runc's ConvertCPUSharesToCgroupV2Value) */
export function sharesToWeight(shares: number): number {
  if (shares <= 0) return 0;
  return 1 + Math.floor(((shares - 2) * 9999) / 262142);
}

/** ... and back (the kubelet's CpuWeightToCpuShares, reading a v2 pod cgroup) */
export function weightToShares(weight: number): number {
  if (weight <= 0) return 0;
  return Math.floor(((weight - 1) * 262142) / 9999) + 2;
}

/** a cgroup's settings (the kubelet's ResourceConfig): what is undefined is left as it is */
export interface ResourceConfig {
  cpuShares?: number;
  /** µs per period; -1: no limit */
  cpuQuota?: number;
  cpuPeriod?: number;
  /** bytes; -1: no limit */
  memory?: number;
  /** -1: no limit */
  pidsLimit?: number;
}

type Sum = { cpu: number; memory: number; has: Set<string> };
const zero = (): Sum => ({ cpu: 0, memory: 0, has: new Set() });
function listOf(r: Record<string, string> | undefined): Sum {
  const s = zero();
  for (const n of ['cpu', 'memory'] as const) {
    if (r?.[n] === undefined) continue;
    s.has.add(n);
    s[n] = n === 'cpu' ? milli(r, n) : value(r, n);
  }
  return s;
}
function add(a: Sum, b: Sum): void {
  a.cpu += b.cpu;
  a.memory += b.memory;
  for (const n of b.has) a.has.add(n);
}
function max(a: Sum, b: Sum): void {
  for (const n of b.has) {
    if (!a.has.has(n) || b[n as 'cpu' | 'memory'] > a[n as 'cpu' | 'memory']) a[n as 'cpu' | 'memory'] = b[n as 'cpu' | 'memory'];
    a.has.add(n);
  }
}
const copy = (s: Sum): Sum => ({ cpu: s.cpu, memory: s.memory, has: new Set(s.has) });

/**
 * A pod's requests or limits as the kubelet sums them (resourcehelper PodRequests/PodLimits): its
 * containers and sidecars added up, or the largest init container with the sidecars started
 * before it, whichever is more; the overhead added (for limits only to the resources limited).
 * `each` sees each container's figures as they count (an init container's with the sidecars
 * before it).
 */
export function podResources(pod: any, which: 'requests' | 'limits', each?: (s: Sum) => void): Sum {
  const of = (c: any): Sum => {
    const r = c.resources ?? {};
    // (a request defaults to its limit, as the API server defaults it)
    return which === 'limits' ? listOf(r.limits) : listOf({ ...(r.limits ?? {}), ...(r.requests ?? {}) } as Record<string, string>);
  };
  const total = zero();
  for (const c of pod.spec?.containers ?? []) {
    const s = of(c);
    each?.(s);
    add(total, s);
  }
  const sidecars = zero();
  const inits = zero();
  for (const c of pod.spec?.initContainers ?? []) {
    let s = of(c);
    if (c.restartPolicy === 'Always') {
      add(total, s);
      add(sidecars, s);
      s = copy(sidecars);
    } else {
      const t = zero();
      add(t, s);
      add(t, sidecars);
      s = t;
    }
    each?.(s);
    max(inits, s);
  }
  max(total, inits);
  const overhead = listOf(pod.spec?.overhead);
  if (which === 'requests') add(total, overhead);
  else for (const n of overhead.has) if (total.has.has(n)) total[n as 'cpu' | 'memory'] += overhead[n as 'cpu' | 'memory'];
  return total;
}

/**
 * ResourceConfigForPod: the pod cgroup's settings. CPU shares of the pod's CPU requests; the CFS
 * quota of its CPU limits when every container has one (Guaranteed pods always; -1 when
 * cpuCFSQuota is off); the memory limit when every container has one. BestEffort: 2 shares.
 */
export function resourceConfigForPod(pod: any, enforceCPULimits: boolean, cpuPeriodUs: number): ResourceConfig {
  const reqs = podResources(pod, 'requests');
  let cpuLimitsDeclared = true;
  let memoryLimitsDeclared = true;
  const limits = podResources(pod, 'limits', (s) => {
    if (s.cpu === 0) cpuLimitsDeclared = false;
    if (s.memory === 0) memoryLimitsDeclared = false;
  });
  const cpuShares = milliCPUToShares(reqs.cpu);
  const cpuQuota = enforceCPULimits ? milliCPUToQuota(limits.cpu, cpuPeriodUs) : -1;
  switch (qosClass(pod)) {
    case 'Guaranteed':
      return { cpuShares, cpuQuota, cpuPeriod: cpuPeriodUs, memory: limits.memory };
    case 'Burstable': {
      const rc: ResourceConfig = { cpuShares };
      if (cpuLimitsDeclared) Object.assign(rc, { cpuQuota, cpuPeriod: cpuPeriodUs });
      if (memoryLimitsDeclared) rc.memory = limits.memory;
      return rc;
    }
    default:
      return { cpuShares: MIN_SHARES };
  }
}

/** the Burstable QoS cgroup's CPU shares: those of its pods' CPU requests (setCPUCgroupConfig) */
export function burstableCPUShares(pods: any[]): number {
  let total = 0;
  for (const p of pods) if (qosClass(p) === 'Burstable') total += podResources(p, 'requests').cpu;
  return milliCPUToShares(total);
}

/**
 * kubepods' settings (getCgroupConfig of the node's allocatable): CPU shares, memory and pids of
 * the capacity, less --kube-reserved and --system-reserved when enforceNodeAllocatable has "pods"
 * (getNodeAllocatableInternalAbsolute; the eviction thresholds are not taken off here).
 * `capacity`: cpu in millicores, memory in bytes, pid the node's process IDs.
 */
export function nodeAllocatableConfig(capacity: { cpu: number; memory: number; pid?: number }, reserved: Record<string, string>[], enforcePods: boolean): ResourceConfig {
  const less = (name: 'cpu' | 'memory' | 'pid', v: number) => {
    if (!enforcePods) return v;
    let out = v;
    for (const r of reserved) out -= name === 'cpu' ? milli(r, 'cpu') : value(r, name);
    return Math.max(0, out);
  };
  const rc: ResourceConfig = { memory: less('memory', capacity.memory), cpuShares: milliCPUToShares(less('cpu', capacity.cpu)) };
  if (capacity.pid !== undefined) rc.pidsLimit = less('pid', capacity.pid);
  return rc;
}

// ─────────────────────────────────────────────────────────────────────────────
// Names: a cgroup name is its components; its cgroupfs form is /a/b/c
// ─────────────────────────────────────────────────────────────────────────────

export type CgroupName = string[];

/** ParseCgroupfsToCgroupName: "/" is the root, [] */
export function parseCgroupfs(s: string): CgroupName {
  return s.split('/').filter((x) => x !== '');
}

/** ToCgroupfs */
export function cgroupfs(name: CgroupName): string {
  return '/' + name.join('/');
}

export interface QOSCgroups {
  guaranteed: CgroupName;
  burstable: CgroupName;
  besteffort: CgroupName;
}

/** the QoS cgroups under --cgroup-root: <root>/kubepods, .../burstable, .../besteffort */
export function qosCgroupNames(cgroupRoot: string): QOSCgroups {
  const kubepods = [...parseCgroupfs(cgroupRoot), DEFAULT_NODE_ALLOCATABLE_CGROUP];
  return { guaranteed: kubepods, burstable: [...kubepods, 'burstable'], besteffort: [...kubepods, 'besteffort'] };
}

/** the pod's cgroup: pod<uid> under its QoS class's cgroup */
export function podCgroupName(qos: QOSCgroups, pod: any): CgroupName {
  const q = qosClass(pod);
  const parent = q === 'Guaranteed' ? qos.guaranteed : q === 'Burstable' ? qos.burstable : qos.besteffort;
  return [...parent, POD_PREFIX + pod.metadata.uid];
}

/** the pod UID of a pod cgroup's base name (pod<uid>), as GetAllPodsFromCgroups reads it */
export function podUIDOf(base: string): string | undefined {
  if (!base.includes(POD_PREFIX)) return undefined;
  const parts = base.split(POD_PREFIX);
  return parts.length === 2 && parts[0] === '' ? parts[1] : undefined;
}

// ─────────────────────────────────────────────────────────────────────────────
// The cgroup file systems
// ─────────────────────────────────────────────────────────────────────────────

/** the cgroup subsystems mounted on this host (GetCgroupSubsystems) */
export interface CgroupSubsystems {
  /** a cgroup2 file system at /sys/fs/cgroup (IsCgroup2UnifiedMode) */
  v2: boolean;
  /** v1: each subsystem's mount point (the shortest when mounted more than once); v2: the controllers available, each at the unified mount */
  mountPoints: Map<string, string>;
  /** v2: where the cgroup2 file system is mounted (/sys/fs/cgroup) */
  unifiedMount?: string;
}

/** the v1 subsystems runc's cgroupfs manager makes a container's cgroup in (libcontainer fs) */
const V1_SUBSYSTEMS = ['cpuset', 'devices', 'memory', 'cpu', 'cpuacct', 'pids', 'blkio', 'hugetlb', 'net_cls', 'net_prio', 'perf_event', 'freezer', 'rdma', 'name=systemd', 'misc'];
/** the controllers the kubelet needs on v2 (getSupportedUnifiedControllers), those the root has */
const V2_CONTROLLERS = ['cpu', 'cpuset', 'memory', 'hugetlb', 'pids'];

/** reads /proc/self/mounts (or `mounts`, its text) */
export function detectCgroupSubsystems(mounts?: string, unifiedMount = CGROUP_MOUNT): CgroupSubsystems {
  const text = mounts ?? readFileSync('/proc/self/mounts', 'utf8');
  const rows = text.split('\n').map((l) => l.split(' ')).filter((f) => f.length >= 4);
  const unified = rows.some((f) => f[2] === 'cgroup2' && f[1] === unifiedMount);
  const mountPoints = new Map<string, string>();
  if (unified) {
    let controllers: string[] = [];
    try {
      controllers = readFileSync(join(unifiedMount, 'cgroup.controllers'), 'utf8').trim().split(/\s+/).filter(Boolean);
    } catch {
      /* none readable */
    }
    for (const c of controllers) mountPoints.set(c, unifiedMount);
    return { v2: true, mountPoints, unifiedMount };
  }
  for (const f of rows) {
    if (f[2] !== 'cgroup') continue;
    const mp = f[1]!.replace(/\\040/g, ' ');
    for (const opt of f[3]!.split(',')) {
      if (!V1_SUBSYSTEMS.includes(opt) && !opt.startsWith('name=')) continue;
      const prev = mountPoints.get(opt);
      if (prev === undefined || mp.length < prev.length) mountPoints.set(opt, mp);
    }
  }
  if (mountPoints.size === 0) throw new Error('failed to find cgroup mounts');
  return { v2: false, mountPoints };
}

function readTrim(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** the PIDs of a cgroup.procs file's text */
function parsePids(text: string | undefined): number[] {
  return text ? text.split('\n').map(Number).filter((n) => Number.isInteger(n) && n > 0) : [];
}

function procsOf(dir: string): number[] {
  return parsePids(readTrim(join(dir, 'cgroup.procs')));
}

/** the names of a directory's subdirectories (none when it cannot be read) */
function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** a cgroup's figures as cAdvisor gives them to the kubelet's Summary API (CgroupManager.usage) */
export interface CgroupUsage {
  /** when read (ms since the epoch) */
  time: number;
  /** when the cgroup was made, as cAdvisor tells (ms since the epoch) */
  creationTime: number;
  /** CPU time (ns); absent without a cpuacct (v2: cpu.stat) figure */
  cpuNanos?: number;
  /** absent without a memory controller */
  memory?: {
    usageBytes: number;
    /** usage less the inactive file pages (0 at the least) */
    workingSetBytes: number;
    rssBytes: number;
    pageFaults: number;
    majorPageFaults: number;
    /** the memory limit; absent: unlimited (above 2^62) */
    limitBytes?: number;
    swapBytes: number;
    /** the swap limit (v1: memory and swap); absent: unlimited */
    swapLimitBytes?: number;
  };
}

/**
 * A cgroup's further figures, as cAdvisor's Prometheus collector gives them (/metrics/cadvisor):
 * its container spec (CPU shares, CFS period and quota; memory limit, swap limit, reservation) and
 * the libcontainer stats beyond CgroupUsage's (CPU time by mode, CFS throttling; page cache,
 * mapped files, the highest usage, the limit hits, kernel memory, active and inactive files)
 */
export interface CgroupDetail {
  /** absent without a cpu controller (cAdvisor's spec.HasCpu) */
  cpu?: {
    userNanos: number;
    systemNanos: number;
    periods: number;
    throttledPeriods: number;
    throttledNanos: number;
    shares: number;
    periodUs: number;
    /** 0: no quota */
    quotaUs: number;
  };
  /** absent without a memory controller (spec.HasMemory) */
  memory?: {
    cache: number;
    mappedFile: number;
    maxUsage: number;
    failcnt: number;
    kernelUsage: number;
    activeFile: number;
    inactiveFile: number;
    /** as read (cAdvisor reports above 2^62 as 0) */
    limit: number;
    swapLimit: number;
    reservation: number;
  };
}

/**
 * The kubelet's cgroup manager with the cgroupfs driver (cgroup_manager_linux.go, libcontainer's
 * fs and fs2 managers) over the mounted subsystems.
 */
export class CgroupManager {
  constructor(readonly subsystems: CgroupSubsystems) {}

  /** removes one (empty) cgroup directory */
  protected rmdir(dir: string): void {
    rmdirSync(dir);
  }

  /** the distinct directories of a cgroup, one per mounted hierarchy (v2: one) */
  dirs(name: CgroupName): string[] {
    return this.mounts().map((mp) => join(mp, cgroupfs(name)));
  }

  /** the distinct mount points (v2: the unified one) */
  private mounts(): string[] {
    if (this.subsystems.v2) return [this.subsystems.unifiedMount ?? CGROUP_MOUNT];
    return [...new Set(this.subsystems.mountPoints.values())];
  }

  /** the unified directory (v2) */
  private unified(name: CgroupName): string {
    return join(this.subsystems.unifiedMount ?? CGROUP_MOUNT, cgroupfs(name));
  }

  private dir(subsystem: string, name: CgroupName): string | undefined {
    const mp = this.subsystems.mountPoints.get(subsystem);
    return mp === undefined ? undefined : join(mp, cgroupfs(name));
  }

  /**
   * Validate: v1, the cgroup is in each hierarchy the kubelet checks (cpu, cpuacct, cpuset, memory,
   * pids, and hugetlb when mounted); v2, the controllers it needs are enabled in it. Returns the
   * kubelet's error, or undefined.
   */
  validate(name: CgroupName): string | undefined {
    // (Go's %q of a CgroupName, a []string)
    const q = `[${name.map((n) => JSON.stringify(n)).join(' ')}]`;
    if (this.subsystems.v2) {
      const dir = this.unified(name);
      const enabled = readTrim(join(dir, 'cgroup.controllers'));
      if (enabled === undefined) return `could not read controllers for cgroup ${q}: open ${join(dir, 'cgroup.controllers')}: no such file or directory`;
      const have = new Set(enabled.split(/\s+/));
      const missing = V2_CONTROLLERS.filter((c) => this.subsystems.mountPoints.has(c) && !have.has(c)).sort();
      return missing.length ? `cgroup ${q} has some missing controllers: ${missing.join(', ')}` : undefined;
    }
    const allow = ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids', 'hugetlb'];
    const missing: string[] = [];
    for (const s of allow) {
      const d = this.dir(s, name);
      if (d !== undefined && !existsSync(d)) missing.push(d);
    }
    return missing.length ? `cgroup ${q} has some missing paths: ${missing.sort().join(', ')}` : undefined;
  }

  exists(name: CgroupName): boolean {
    return this.validate(name) === undefined;
  }

  /**
   * Create: the cgroup in every hierarchy (Apply(-1)), then its settings (Set). `skipDevices`: not
   * in the devices hierarchy (libcontainer's SkipDevices, as the kubelet's system containers are made)
   */
  create(name: CgroupName, rc: ResourceConfig, skipDevices = false): void {
    if (this.subsystems.v2) {
      // (fs2.CreateCgroupPath: each level made, and every controller of the root enabled for its children)
      const ctrs = [...this.subsystems.mountPoints.keys()];
      let cur = this.unified([]);
      for (let i = 0; i <= name.length; i++) {
        if (i > 0) {
          cur = join(cur, name[i - 1]!);
          mkdirSync(cur, { recursive: true });
        }
        if (i < name.length && ctrs.length) {
          try {
            writeFileSync(join(cur, 'cgroup.subtree_control'), ctrs.map((c) => '+' + c).join(' '));
          } catch {
            for (const c of ctrs) {
              try {
                writeFileSync(join(cur, 'cgroup.subtree_control'), '+' + c);
              } catch {
                /* not delegated here; its settings fail below */
              }
            }
          }
        }
      }
    } else {
      for (const s of V1_SUBSYSTEMS) {
        const mp = this.subsystems.mountPoints.get(s);
        if (mp === undefined || (skipDevices && this.devicesOnly(mp))) continue;
        if (s === 'cpuset') {
          // (a cpuset cgroup holds no task before its cpus and mems are set: each level copies its parent's)
          let cur = mp;
          for (const part of name) {
            const parent = cur;
            cur = join(cur, part);
            mkdirSync(cur, { recursive: true });
            for (const f of ['cpuset.cpus', 'cpuset.mems']) {
              if (readTrim(join(cur, f))) continue;
              const v = readTrim(join(parent, f));
              if (v) writeFileSync(join(cur, f), v);
            }
          }
        } else {
          mkdirSync(join(mp, cgroupfs(name)), { recursive: true });
        }
      }
    }
    this.set(name, rc);
  }

  /** Update (Set): writes the settings given */
  set(name: CgroupName, rc: ResourceConfig): void {
    if (this.subsystems.v2) {
      const d = this.unified(name);
      if (rc.cpuShares !== undefined) writeFileSync(join(d, 'cpu.weight'), String(sharesToWeight(rc.cpuShares)));
      if (rc.cpuQuota !== undefined || rc.cpuPeriod !== undefined) {
        const quota = rc.cpuQuota !== undefined && rc.cpuQuota > 0 ? String(rc.cpuQuota) : 'max';
        writeFileSync(join(d, 'cpu.max'), rc.cpuPeriod ? `${quota} ${rc.cpuPeriod}` : quota);
      }
      if (rc.memory !== undefined) writeFileSync(join(d, 'memory.max'), rc.memory > 0 ? String(rc.memory) : 'max');
      if (rc.pidsLimit !== undefined) writeFileSync(join(d, 'pids.max'), rc.pidsLimit > 0 ? String(rc.pidsLimit) : 'max');
      return;
    }
    const cpu = this.dir('cpu', name);
    if (cpu !== undefined) {
      if (rc.cpuShares !== undefined) writeFileSync(join(cpu, 'cpu.shares'), String(rc.cpuShares));
      const quota = rc.cpuQuota !== undefined ? String(rc.cpuQuota === 0 ? -1 : rc.cpuQuota) : undefined;
      if (rc.cpuPeriod) {
        try {
          writeFileSync(join(cpu, 'cpu.cfs_period_us'), String(rc.cpuPeriod));
        } catch (e) {
          // (a period that makes the present quota too large for the parent: the quota first, as runc does)
          if (quota === undefined) throw e;
          writeFileSync(join(cpu, 'cpu.cfs_quota_us'), quota);
          writeFileSync(join(cpu, 'cpu.cfs_period_us'), String(rc.cpuPeriod));
        }
      }
      if (quota !== undefined) writeFileSync(join(cpu, 'cpu.cfs_quota_us'), quota);
    }
    const mem = this.dir('memory', name);
    if (mem !== undefined && rc.memory !== undefined) writeFileSync(join(mem, 'memory.limit_in_bytes'), String(rc.memory > 0 ? rc.memory : -1));
    const pids = this.dir('pids', name);
    if (pids !== undefined && rc.pidsLimit !== undefined) writeFileSync(join(pids, 'pids.max'), rc.pidsLimit > 0 ? String(rc.pidsLimit) : 'max');
  }

  /** the settings in place (GetCgroupConfig): CPU shares, quota (-1: none) and period, memory limit (Infinity: none) */
  get(name: CgroupName): { cpuShares: number; cpuQuota: number; cpuPeriod: number; memory: number } {
    const num = (s: string | undefined, none: number) => (s === undefined || s === 'max' || s === '' ? none : Number(s));
    if (this.subsystems.v2) {
      const d = this.unified(name);
      const [q, p] = (readTrim(join(d, 'cpu.max')) ?? 'max 100000').split(/\s+/);
      return { cpuShares: weightToShares(num(readTrim(join(d, 'cpu.weight')), 100)), cpuQuota: num(q, -1), cpuPeriod: num(p, 100000), memory: num(readTrim(join(d, 'memory.max')), Infinity) };
    }
    const cpu = this.dir('cpu', name);
    const mem = this.dir('memory', name);
    const memory = mem ? num(readTrim(join(mem, 'memory.limit_in_bytes')), Infinity) : Infinity;
    return {
      cpuShares: cpu ? num(readTrim(join(cpu, 'cpu.shares')), 1024) : 1024,
      cpuQuota: cpu ? num(readTrim(join(cpu, 'cpu.cfs_quota_us')), -1) : -1,
      cpuPeriod: cpu ? num(readTrim(join(cpu, 'cpu.cfs_period_us')), 100000) : 100000,
      // (v1 has no "max": the unlimited figure is the largest page-aligned int64)
      memory: memory < 0 || memory >= 2 ** 62 ? Infinity : memory,
    };
  }

  /** the processes in the cgroup and the cgroups under it, in every hierarchy (Pids) */
  pids(name: CgroupName): number[] {
    const out = new Set<number>();
    const walk = (d: string) => {
      for (const p of procsOf(d)) out.add(p);
      for (const e of subdirs(d)) walk(join(d, e));
    };
    for (const d of this.dirs(name)) if (existsSync(d)) walk(d);
    return [...out].sort((a, b) => a - b);
  }

  /** moves a process into the cgroup, in every hierarchy (Apply); `skipDevices`: not in the devices one (SkipDevices) */
  apply(name: CgroupName, pid: number, skipDevices = false): void {
    for (const mp of this.mounts()) {
      if (skipDevices && this.devicesOnly(mp)) continue;
      writeFileSync(join(mp, cgroupfs(name), 'cgroup.procs'), String(pid));
    }
  }

  /** v1: a hierarchy of the devices controller alone */
  private devicesOnly(mp: string): boolean {
    if (this.subsystems.v2) return false;
    const here = [...this.subsystems.mountPoints].filter(([, m]) => m === mp).map(([s]) => s);
    return here.length > 0 && here.every((s) => s === 'devices');
  }

  /**
   * the processes directly in the cgroup (not those under it), as the kubelet's cm/util GetPids
   * lists them: v1 from the devices hierarchy, v2 from the unified one
   */
  procs(name: CgroupName): number[] {
    const mp = this.subsystems.v2 ? (this.subsystems.unifiedMount ?? CGROUP_MOUNT) : this.subsystems.mountPoints.get('devices');
    if (mp === undefined) throw new Error('mountpoint for devices not found');
    // (read without readTrim: a cgroup that cannot be listed is an error here, not an empty one)
    return parsePids(readFileSync(join(mp, cgroupfs(name), 'cgroup.procs'), 'utf8').trim());
  }

  /**
   * The cgroup's CPU and memory now, as cAdvisor reads a cgroup (its libcontainer handler and the
   * container spec: limits, creation time); undefined when the cgroup does not exist. v1: CPU time
   * from cpuacct.usage; memory from memory.usage_in_bytes and memory.stat (total_rss, total_swap and
   * total_inactive_file with use_hierarchy; pgfault and pgmajfault), the limits from
   * memory.limit_in_bytes and memory.memsw.limit_in_bytes. v2: cpu.stat's usage_usec; memory.current,
   * memory.stat (anon, inactive_file, pgfault, pgmajfault), memory.swap.current, and memory.max and
   * memory.swap.max of the nearest cgroup that has them.
   */
  usage(name: CgroupName, now = Date.now()): CgroupUsage | undefined {
    const num = (s: string | undefined): number | undefined => (s === undefined || s === '' ? undefined : s === 'max' ? Infinity : Number(s));
    const stat = (text: string | undefined): Map<string, number> => new Map((text ?? '').split('\n').map((l) => l.split(' ')).filter((f) => f.length === 2).map((f) => [f[0]!, Number(f[1])]));
    // (cAdvisor: the lowest modification time of the cgroup's directories and of their
    // cgroup.clone_children, v2 cgroup.events, which a new child cgroup does not touch; not before boot)
    const dirs = this.subsystems.v2 ? [this.unified(name)] : [...new Set([...this.subsystems.mountPoints].filter(([s]) => !s.startsWith('name=')).map(([, mp]) => join(mp, cgroupfs(name))))];
    let created = Infinity;
    for (const d of dirs) {
      for (const f of [d, join(d, this.subsystems.v2 ? 'cgroup.events' : 'cgroup.clone_children')]) {
        try {
          created = Math.min(created, statSync(f).mtimeMs);
        } catch {
          /* not in this hierarchy */
        }
      }
    }
    const boot = now - os.uptime() * 1000;
    const out: CgroupUsage = { time: now, creationTime: Math.max(boot, created) };
    const unlimited = (v: number | undefined) => v === undefined || v > 2 ** 62;
    if (this.subsystems.v2) {
      const d = this.unified(name);
      if (!existsSync(d)) return undefined;
      const usec = stat(readTrim(join(d, 'cpu.stat'))).get('usage_usec');
      if (usec !== undefined) out.cpuNanos = usec * 1000;
      // (the limits of the nearest cgroup with memory.max: the root has none, nor any memory figures)
      let limits: string | undefined;
      for (let n = name.length; n > 0 && limits === undefined; n--) {
        const up = this.unified(name.slice(0, n));
        if (existsSync(join(up, 'memory.max'))) limits = up;
      }
      if (limits !== undefined) {
        const ms = stat(readTrim(join(d, 'memory.stat')));
        const usage = num(readTrim(join(d, 'memory.current'))) ?? 0;
        const inactive = ms.get('inactive_file');
        const limit = num(readTrim(join(limits, 'memory.max')));
        const swapLimit = num(readTrim(join(limits, 'memory.swap.max'))) ?? 0;
        out.memory = {
          usageBytes: usage,
          workingSetBytes: inactive === undefined ? usage : Math.max(0, usage - inactive),
          rssBytes: ms.get('anon') ?? 0,
          pageFaults: ms.get('pgfault') ?? 0,
          majorPageFaults: ms.get('pgmajfault') ?? 0,
          limitBytes: unlimited(limit) ? undefined : limit,
          swapBytes: num(readTrim(join(d, 'memory.swap.current'))) ?? 0,
          swapLimitBytes: unlimited(swapLimit) ? undefined : swapLimit,
        };
      }
      return out;
    }
    const cpuacct = this.dir('cpuacct', name);
    const mem = this.dir('memory', name);
    const cpu = this.dir('cpu', name);
    if (![cpuacct, mem, cpu].some((d) => d !== undefined && existsSync(d))) return undefined;
    if (cpuacct !== undefined && existsSync(cpuacct)) out.cpuNanos = num(readTrim(join(cpuacct, 'cpuacct.usage'))) ?? 0;
    if (mem !== undefined && existsSync(mem)) {
      const ms = stat(readTrim(join(mem, 'memory.stat')));
      const hier = readTrim(join(mem, 'memory.use_hierarchy')) === '1';
      const usage = num(readTrim(join(mem, 'memory.usage_in_bytes'))) ?? 0;
      const inactive = ms.get('total_inactive_file');
      const limit = num(readTrim(join(mem, 'memory.limit_in_bytes')));
      // (cAdvisor reads a missing memory.memsw.limit_in_bytes, no swap accounting, as 0)
      const swapLimit = num(readTrim(join(mem, 'memory.memsw.limit_in_bytes'))) ?? 0;
      const swap = ms.get(hier ? 'total_swap' : 'swap') ?? 0;
      out.memory = {
        usageBytes: usage,
        workingSetBytes: inactive === undefined ? usage : Math.max(0, usage - inactive),
        rssBytes: ms.get(hier ? 'total_rss' : 'rss') ?? 0,
        pageFaults: ms.get('pgfault') ?? 0,
        majorPageFaults: ms.get('pgmajfault') ?? 0,
        limitBytes: unlimited(limit) ? undefined : limit,
        swapBytes: swap,
        swapLimitBytes: unlimited(swapLimit) ? undefined : swapLimit,
      };
    }
    return out;
  }

  /**
   * The cgroup and every cgroup under it, in any hierarchy (name= hierarchies aside), parents
   * first: the cgroups cAdvisor's raw handler lists below a watched one
   */
  tree(name: CgroupName): CgroupName[] {
    const roots = this.subsystems.v2 ? [this.unified([])] : [...new Set([...this.subsystems.mountPoints].filter(([s]) => !s.startsWith('name=')).map(([, mp]) => mp))];
    const seen = new Set<string>();
    const out: CgroupName[] = [];
    const walk = (n: CgroupName, depth: number): void => {
      const key = cgroupfs(n);
      if (seen.has(key)) return;
      let found = false;
      const children = new Set<string>();
      for (const mp of roots) {
        const d = join(mp, key);
        if (!existsSync(d)) continue;
        found = true;
        if (depth < 32) for (const c of subdirs(d)) children.add(c);
      }
      if (!found) return;
      seen.add(key);
      out.push(n);
      for (const c of [...children].sort()) walk([...n, c], depth + 1);
    };
    walk(name, 0);
    return out;
  }

  /**
   * The cgroup's spec and further stats as cAdvisor reads them (common.GetSpec, libcontainer's
   * GetStats); undefined when it does not exist. v1: cpu.shares, cpu.cfs_period_us,
   * cpu.cfs_quota_us, cpu.stat, cpuacct.stat (USER_HZ ticks); memory.stat (total_* with
   * use_hierarchy), memory.max_usage_in_bytes, memory.failcnt, memory.kmem.usage_in_bytes, the
   * limits and memory.soft_limit_in_bytes. v2: cpu.weight (as shares), cpu.max, cpu.stat;
   * memory.stat (file, file_mapped, active_file, inactive_file), memory.peak, memory.events' max,
   * memory.max, memory.swap.max, memory.min.
   */
  detail(name: CgroupName): CgroupDetail | undefined {
    const n = (s: string | undefined): number => {
      if (s === undefined || s === '' || s === 'max') return 0;
      const v = Number(s);
      return Number.isFinite(v) ? v : 0;
    };
    const stat = (text: string | undefined): Map<string, number> => new Map((text ?? '').split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => f.length === 2).map((f) => [f[0]!, Number(f[1])]));
    const out: CgroupDetail = {};
    if (this.subsystems.v2) {
      const d = this.unified(name);
      if (!existsSync(d)) return undefined;
      const cs = stat(readTrim(join(d, 'cpu.stat')));
      const max = (readTrim(join(d, 'cpu.max')) ?? '').split(' ');
      const weight = n(readTrim(join(d, 'cpu.weight')));
      out.cpu = {
        userNanos: (cs.get('user_usec') ?? 0) * 1000,
        systemNanos: (cs.get('system_usec') ?? 0) * 1000,
        periods: cs.get('nr_periods') ?? 0,
        throttledPeriods: cs.get('nr_throttled') ?? 0,
        throttledNanos: (cs.get('throttled_usec') ?? 0) * 1000,
        shares: weight > 0 ? weightToShares(weight) : 0,
        periodUs: n(max[1]),
        quotaUs: max[0] === 'max' ? 0 : n(max[0]),
      };
      if (existsSync(join(d, 'memory.max'))) {
        const ms = stat(readTrim(join(d, 'memory.stat')));
        const ev = stat(readTrim(join(d, 'memory.events')));
        const lim = (f: string) => (readTrim(join(d, f)) === 'max' ? 2 ** 64 : n(readTrim(join(d, f))));
        out.memory = {
          cache: ms.get('file') ?? 0,
          mappedFile: ms.get('file_mapped') ?? 0,
          maxUsage: n(readTrim(join(d, 'memory.peak'))),
          failcnt: ev.get('max') ?? 0,
          kernelUsage: ms.get('kernel') ?? 0,
          activeFile: ms.get('active_file') ?? 0,
          inactiveFile: ms.get('inactive_file') ?? 0,
          limit: lim('memory.max'),
          swapLimit: lim('memory.swap.max'),
          reservation: n(readTrim(join(d, 'memory.min'))),
        };
      }
      return out;
    }
    const cpu = this.dir('cpu', name);
    const cpuacct = this.dir('cpuacct', name);
    const mem = this.dir('memory', name);
    const there = (d: string | undefined): d is string => d !== undefined && existsSync(d);
    if (![cpu, cpuacct, mem].some(there)) return undefined;
    if (there(cpu) || there(cpuacct)) {
      const cs = there(cpu) ? stat(readTrim(join(cpu, 'cpu.stat'))) : new Map<string, number>();
      const ticks = there(cpuacct) ? stat(readTrim(join(cpuacct, 'cpuacct.stat'))) : new Map<string, number>();
      const quota = there(cpu) ? readTrim(join(cpu, 'cpu.cfs_quota_us')) : undefined;
      out.cpu = {
        userNanos: ((ticks.get('user') ?? 0) * 1e9) / USER_HZ,
        systemNanos: ((ticks.get('system') ?? 0) * 1e9) / USER_HZ,
        periods: cs.get('nr_periods') ?? 0,
        throttledPeriods: cs.get('nr_throttled') ?? 0,
        throttledNanos: cs.get('throttled_time') ?? 0,
        shares: there(cpu) ? n(readTrim(join(cpu, 'cpu.shares'))) : 0,
        periodUs: there(cpu) ? n(readTrim(join(cpu, 'cpu.cfs_period_us'))) : 0,
        quotaUs: quota === undefined || quota === '-1' || Number(quota) < 0 ? 0 : n(quota),
      };
    }
    if (there(mem)) {
      const ms = stat(readTrim(join(mem, 'memory.stat')));
      const hier = readTrim(join(mem, 'memory.use_hierarchy')) === '1';
      const key = (k: string) => ms.get(hier ? `total_${k}` : k) ?? 0;
      out.memory = {
        cache: key('cache'),
        mappedFile: key('mapped_file'),
        maxUsage: n(readTrim(join(mem, 'memory.max_usage_in_bytes'))),
        failcnt: n(readTrim(join(mem, 'memory.failcnt'))),
        kernelUsage: n(readTrim(join(mem, 'memory.kmem.usage_in_bytes'))),
        activeFile: ms.get('total_active_file') ?? 0,
        inactiveFile: ms.get('total_inactive_file') ?? 0,
        limit: n(readTrim(join(mem, 'memory.limit_in_bytes'))),
        swapLimit: n(readTrim(join(mem, 'memory.memsw.limit_in_bytes'))),
        reservation: n(readTrim(join(mem, 'memory.soft_limit_in_bytes'))),
      };
    }
    return out;
  }

  /** removes the cgroup and those under it, deepest first, in every hierarchy (Destroy; retried a few times as its last tasks exit) */
  remove(name: CgroupName): void {
    const errs: string[] = [];
    for (const d of this.dirs(name)) {
      if (!existsSync(d)) continue;
      const rm = (dir: string): void => {
        let entries: string[] = [];
        try {
          entries = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
        } catch {
          return;
        }
        for (const e of entries) rm(join(dir, e));
        let delay = 10;
        for (let i = 0; ; i++) {
          try {
            this.rmdir(dir);
            return;
          } catch (e) {
            const code = (e as NodeJS.ErrnoException).code;
            if (code === 'ENOENT') return;
            if (i >= 5) {
              errs.push(`${dir}: ${(e as Error).message}`);
              return;
            }
            sleepSync(delay);
            delay *= 2;
          }
        }
      };
      rm(d);
    }
    if (errs.length) throw new Error(`failed to remove cgroup paths: ${errs.join('; ')}`);
  }

  /** the pod cgroups directly under these QoS cgroups, in any hierarchy: UID → name (GetAllPodsFromCgroups) */
  podCgroups(qosRoots: CgroupName[]): Map<string, CgroupName> {
    const found = new Map<string, CgroupName>();
    for (const mp of this.mounts()) {
      for (const q of qosRoots) {
        for (const e of subdirs(join(mp, cgroupfs(q)))) {
          const uid = podUIDOf(e);
          if (uid) found.set(uid, [...q, e]);
        }
      }
    }
    return found;
  }
}

// ─────────────────────────────────────────────────────────────────────────────
// The container manager's share of it: the node's cgroups and the pods'
// ─────────────────────────────────────────────────────────────────────────────

export interface ContainerManagerOptions {
  cgroupsPerQOS: boolean;
  /** --cgroup-root ("/" by default) */
  cgroupRoot: string;
  /** --cgroup-driver: cgroupfs or systemd */
  cgroupDriver: string;
  enforceNodeAllocatable: string[];
  /** --pod-max-pids: > 0 sets each pod's pids.max */
  podPidsLimit: number;
  /** --cpu-cfs-quota and --cpu-cfs-quota-period (µs) */
  cpuCFSQuota: boolean;
  cpuCFSQuotaPeriodUs: number;
  /** --kube-reserved and --system-reserved */
  reserved: Record<string, string>[];
  /**
   * --system-reserved and --kube-reserved apart, with --system-reserved-cgroup and
   * --kube-reserved-cgroup: the cgroups limited to them when enforceNodeAllocatable names
   * system-reserved or kube-reserved (or their -compressible forms, CPU only)
   */
  systemReserved?: Record<string, string>;
  kubeReserved?: Record<string, string>;
  systemReservedCgroup?: string;
  kubeReservedCgroup?: string;
  /** --kubelet-cgroups: the cgroup the kubelet moves itself into (made when missing), and keeps itself in */
  kubeletCgroups?: string;
  /**
   * --system-cgroups: the cgroup every non-kernel process of the root cgroup is moved into (made
   * when missing), at start and every minute; its figures are the Summary's "misc" system container
   */
  systemCgroups?: string;
  /** --runtime-cgroups: the runtime's cgroup, only read: the Summary's "runtime" system container */
  runtimeCgroups?: string;
  /** --oom-score-adj: the kubelet's own OOM score, set again as its cgroup is looked for */
  kubeletOOMScoreAdj?: number;
  /**
   * the cgroup whose processes --system-cgroups moves: "/" (the root, the kubelet's); the
   * environment's KEELSON_SYSTEM_CGROUPS_SOURCE when set, for tests only (a test must not move the
   * processes of the machine it runs on)
   */
  systemCgroupsSource?: string;
  /**
   * --qos-reserved with the QOSReserved gate: the percentage of the memory requested by the pods of
   * the higher QoS classes that the lower ones may not use (the Burstable and BestEffort cgroups'
   * memory limits)
   */
  qosReservedMemoryPercent?: number;
  log: Logger;
  /** the mounted subsystems (detected when not given) */
  subsystems?: CgroupSubsystems;
  /** the cgroup manager over them (made when not given) */
  cgroupManager?: CgroupManager;
  /** the node's capacity: CPU in millicores, memory in bytes, process IDs (read from the host when not given) */
  capacity?: () => { cpu: number; memory: number; pid?: number };
  /** whether systemd runs this host (/run/systemd/system, when not given) */
  systemdRunning?: boolean;
}

/** the node's process ID capacity: kernel.pid_max, or kernel.threads-max when lower (pidlimit.Stats) */
export function hostPidCapacity(): number | undefined {
  const pidMax = Number(readTrim('/proc/sys/kernel/pid_max'));
  const threadsMax = Number(readTrim('/proc/sys/kernel/threads-max'));
  if (!(pidMax > 0)) return undefined;
  return threadsMax > 0 ? Math.min(pidMax, threadsMax) : pidMax;
}

/** how often the kubelet looks for its own cgroup without --kubelet-cgroups (the container manager's periodic tasks) */
const KUBELET_CGROUP_PERIOD_MS = 5 * 60_000;

/** an error as Go's os errors print it: "permission denied", "no such file or directory", ... */
function goError(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  const texts: Record<string, string> = { EACCES: 'permission denied', EPERM: 'operation not permitted', ENOENT: 'no such file or directory', ESRCH: 'no such process', EINVAL: 'invalid argument', EBUSY: 'device or resource busy' };
  return (code && texts[code]) ?? (e as Error).message;
}

/** a kernel thread: no executable behind /proc/<pid>/exe (isKernelPid) */
function isKernelPid(pid: number): boolean {
  try {
    readlinkSync(`/proc/${pid}/exe`);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/**
 * A process's cgroup for the kubelet's accounting (getContainer), from its /proc/<pid>/cgroup: v2
 * the unified one; v1 the cpu cgroup, which must be the memory cgroup too, or the name=systemd one
 * when mounted (`info` tells when that is not the cpu or memory cgroup). Throws the kubelet's errors.
 */
export function processCgroup(text: string, v2: boolean, info: (msg: string) => void = () => {}): string {
  const cgs = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    for (const ctl of m[1]!.split(',')) cgs.set(ctl, m[2]!);
  }
  if (v2) {
    const c = cgs.get('');
    if (c === undefined) throw new Error('mountpoint for unified not found');
    return c;
  }
  const cpu = cgs.get('cpu');
  if (cpu === undefined) throw new Error('mountpoint for cpu not found');
  const memory = cgs.get('memory');
  if (memory === undefined) throw new Error('mountpoint for memory not found');
  if (cpu !== memory) throw new Error(`cpu and memory cgroup hierarchy not unified.  cpu: ${cpu}, memory: ${memory}`);
  const systemd = cgs.get('name=systemd');
  if (systemd !== undefined) {
    if (systemd !== cpu) info('CPUAccounting not enabled for process');
    if (systemd !== memory) info('MemoryAccounting not enabled for process');
    return systemd;
  }
  return cpu;
}

/** a system-reserved or kube-reserved cgroup that could not be limited (FailedNodeAllocatableEnforcement) */
export class ReservedCgroupError extends Error {}

/**
 * The node's cgroups (NewContainerManager's checks, Start's QoS hierarchy and node allocatable)
 * and the pods' (the pod container manager). Without cgroupsPerQOS it makes nothing and pods get
 * no cgroup parent.
 */
export class ContainerManager {
  readonly cgroups: CgroupManager | undefined;
  readonly qos: QOSCgroups;
  private timer?: NodeJS.Timeout;
  private kubeletCgroupTimer?: NodeJS.Timeout;
  private activePods: () => any[] = () => [];
  /**
   * the kubelet's cgroup (NodeConfig.KubeletCgroupsName): --kubelet-cgroups, else the one it is
   * found in (every 5 minutes from the start); '' until found
   */
  private kubeletCgroup: string;
  /** without cgroupsPerQOS, the cgroup manager of the system containers and the figures (anyManager; null: no cgroups found) */
  private reader?: CgroupManager | null;

  /** throws the kubelet's errors for a configuration it refuses */
  constructor(readonly o: ContainerManagerOptions) {
    this.qos = qosCgroupNames(o.cgroupRoot || '/');
    this.kubeletCgroup = o.kubeletCgroups ?? '';
    if (!o.cgroupsPerQOS) return;
    let subsystems: CgroupSubsystems;
    try {
      subsystems = o.cgroupManager?.subsystems ?? o.subsystems ?? detectCgroupSubsystems();
    } catch (e) {
      throw new Error(`failed to get mounted cgroup subsystems: ${(e as Error).message}`);
    }
    this.cgroups = o.cgroupManager ?? new CgroupManager(subsystems);
    if (o.cgroupRoot === '') {
      throw new Error('invalid configuration: cgroups-per-qos was specified and cgroup-root was not specified. To enable the QoS cgroup hierarchy you need to specify a valid cgroup-root');
    }
    const bad = this.cgroups.validate(parseCgroupfs(o.cgroupRoot));
    if (bad) throw new Error(`invalid configuration: ${bad}`);
    o.log.info('Container manager verified user specified cgroup-root exists', { cgroupRoot: parseCgroupfs(o.cgroupRoot) });
  }

  get enabled(): boolean {
    return this.cgroups !== undefined;
  }

  get v2(): boolean {
    return this.cgroups?.subsystems.v2 ?? false;
  }

  private capacity(): { cpu: number; memory: number; pid?: number } {
    if (this.o.capacity) return this.o.capacity();
    // (as the Node's capacity counts them, node.ts)
    return { cpu: (os.cpus().length || 1) * 1000, memory: os.totalmem(), pid: hostPidCapacity() };
  }

  /**
   * Start (setupNode): kubepods with the node's allocatable, the Burstable and BestEffort QoS
   * cgroups, and their update every minute. `activePods`: the pods admitted and not ended, with
   * their admitted resources. Throws what stops the kubelet (the systemd driver without systemd).
   */
  start(activePods: () => any[]): { enforced?: { ok: boolean; message: string }; reserved?: string[] } {
    if (!this.o.kubeletCgroups) {
      // (setupNode's periodic task without --kubelet-cgroups: the kubelet's OOM score, then its cgroup, every 5 minutes)
      this.findKubeletCgroup();
      this.kubeletCgroupTimer = setInterval(() => this.findKubeletCgroup(), KUBELET_CGROUP_PERIOD_MS);
      this.kubeletCgroupTimer.unref();
    }
    if (!this.cgroups) {
      // (setupNode's system containers do not need the pods' cgroups: with cgroupsPerQOS off they are
      // made and kept the same way, at start and every minute)
      if (this.o.systemCgroups === '/') throw new Error('system container cannot be root ("/")');
      if (this.o.systemCgroups || this.o.kubeletCgroups) {
        this.ensureSystemCgroup();
        this.ensureKubeletCgroup();
        this.timer = setInterval(() => {
          this.ensureSystemCgroup();
          this.ensureKubeletCgroup();
        }, QOS_UPDATE_INTERVAL_MS);
        this.timer.unref();
      }
      return {};
    }
    if (this.o.cgroupDriver === 'systemd') {
      const running = this.o.systemdRunning ?? (() => {
        try {
          return statSync('/run/systemd/system').isDirectory();
        } catch {
          return false;
        }
      })();
      if (!running) throw new Error('systemd not running on this host, cannot use systemd cgroups manager');
      throw new Error('cgroupDriver (--cgroup-driver) "systemd" is not supported by Keelson: its node agent makes cgroups with the cgroupfs driver only; use "cgroupfs" (with the runtime\'s SystemdCgroup = false)');
    }
    this.activePods = activePods;
    const cm = this.cgroups;
    const enforcePods = this.o.enforceNodeAllocatable.includes('pods');
    const allocatable = nodeAllocatableConfig(this.capacity(), this.o.reserved, enforcePods);
    const kubepods = this.qos.guaranteed;
    // (createNodeAllocatableCgroups: made once; enforceNodeAllocatableCgroups: set at every start)
    if (!cm.exists(kubepods)) cm.create(kubepods, allocatable);
    let enforced: { ok: boolean; message: string };
    try {
      cm.set(kubepods, allocatable);
      enforced = { ok: true, message: 'Updated Node Allocatable limit across pods' };
    } catch (e) {
      enforced = { ok: false, message: `Failed to update Node Allocatable Limits ${JSON.stringify(cgroupfs(kubepods))}: ${(e as Error).message}` };
    }
    const reserved = this.enforceReservedCgroups();
    // (setupNode's system containers: --system-cgroups, then --kubelet-cgroups)
    if (this.o.systemCgroups === '/') throw new Error('system container cannot be root ("/")');
    this.ensureSystemCgroup();
    this.ensureKubeletCgroup();
    for (const [name, rc] of [[this.qos.burstable, {}], [this.qos.besteffort, { cpuShares: MIN_SHARES }]] as [CgroupName, ResourceConfig][]) {
      try {
        if (!cm.exists(name)) cm.create(name, rc);
        else cm.set(name, rc);
      } catch (e) {
        throw new Error(`failed to initialize top level QOS containers: failed to create top level ${name[name.length - 1] === 'burstable' ? 'Burstable' : 'BestEffort'} QOS cgroup : ${(e as Error).message}`);
      }
    }
    this.updateQOSCgroups();
    this.timer = setInterval(() => {
      try {
        this.updateQOSCgroups();
      } catch (e) {
        this.o.log.error(e, '[ContainerManager] Failed to reserve QoS requests');
      }
      // (the system containers' periodic ensureState: the root's processes go to --system-cgroups,
      // the kubelet stays in --kubelet-cgroups)
      this.ensureSystemCgroup();
      this.ensureKubeletCgroup();
    }, QOS_UPDATE_INTERVAL_MS);
    this.timer.unref();
    return { enforced, reserved };
  }

  /**
   * --kubelet-cgroups (the kubelet's system container): made when missing, and this process moved
   * into it unless there already; a failure is logged, as the kubelet's ensureState logs it.
   */
  private ensureKubeletCgroup(): void {
    const path = this.o.kubeletCgroups ?? '';
    const cm = this.anyManager();
    if (!path || !cm) return;
    const name = parseCgroupfs(path);
    try {
      if (!cm.exists(name)) cm.create(name, {}, true);
      if (!cm.pids(name).includes(process.pid)) cm.apply(name, process.pid, true);
    } catch (e) {
      this.o.log.error(e, 'Failed to ensure state', { containerName: path });
    }
  }

  /**
   * --system-cgroups (ensureSystemCgroups): the processes directly in the root cgroup (listed from
   * the devices hierarchy), but PID 1 and the kernel's threads, are moved into the system cgroup
   * (made when missing) in every hierarchy but devices (the kubelet's SkipDevices: they stay listed
   * there, and are moved again, eleven rounds at the most); the last failure is logged.
   */
  private ensureSystemCgroup(): void {
    const path = this.o.systemCgroups ?? '';
    const cm = this.anyManager();
    if (!path || !cm) return;
    const name = parseCgroupfs(path);
    const source = parseCgroupfs(this.o.systemCgroupsSource ?? process.env['KEELSON_SYSTEM_CGROUPS_SOURCE'] ?? '/');
    let finalErr: string | undefined;
    for (let i = 0; i <= 10; i++) {
      let all: number[];
      try {
        all = cm.procs(source);
      } catch (e) {
        finalErr = `failed to list PIDs for root: ${goError(e)}`;
        continue;
      }
      const pids = all.filter((pid) => pid !== 1 && !isKernelPid(pid));
      if (pids.length === 0) return;
      this.o.log.v(3).info('Moving non-kernel processes', { pids });
      for (const pid of pids) {
        try {
          if (!cm.exists(name)) cm.create(name, {}, true);
          cm.apply(name, pid, true);
        } catch (e) {
          finalErr = `failed to move PID ${pid} into the system container ${JSON.stringify(path)}: ${goError(e)}`;
        }
      }
    }
    if (finalErr !== undefined) this.o.log.info('Failed to ensure state', { containerName: path, err: finalErr });
  }

  /**
   * Without --kubelet-cgroups (setupNode's periodic task): the kubelet's OOM score is set again
   * (ensureProcessInContainerWithOOMScore; a process outside the host's PID namespace is left
   * alone), then its cgroup looked up (getContainer): v2 its one cgroup; v1 its cpu cgroup, which
   * must be its memory cgroup too, or its name=systemd cgroup when there is one. A failure is
   * logged and leaves the kubelet without a system container in the Summary.
   */
  private findKubeletCgroup(): void {
    const pid = process.pid;
    let inHost = true;
    try {
      inHost = readlinkSync('/proc/1/ns/pid') === readlinkSync(`/proc/${pid}/ns/pid`);
    } catch {
      this.o.log.error(new Error('failed to find pid namespace of init process'), 'Failed to ensure process in container with oom score');
      return;
    }
    const adj = this.o.kubeletOOMScoreAdj;
    if (inHost && adj !== undefined) {
      const file = `/proc/${pid}/oom_score_adj`;
      try {
        writeFileSync(file, String(adj));
      } catch (e) {
        this.o.log.error(new Error(`failed to apply oom score ${adj} to PID ${pid}: write ${file}: ${goError(e)}`), 'Failed to ensure process in container with oom score');
        return;
      }
    }
    try {
      this.kubeletCgroup = processCgroup(readFileSync(`/proc/${pid}/cgroup`, 'utf8'), this.anyManager()?.subsystems.v2 ?? false, (msg) => this.o.log.info(msg, { pid }));
    } catch (e) {
      this.o.log.error(e, 'Failed to find cgroups of kubelet');
    }
  }

  /**
   * The Summary's system containers (GetSystemContainersStats): "kubelet" (its cgroup), "runtime"
   * (--runtime-cgroups), "misc" (--system-cgroups) and "pods" (the pods' cgroup root:
   * <cgroupRoot>/kubepods, or --cgroup-root itself without cgroupsPerQOS); those without a cgroup
   * name are left out.
   */
  systemContainers(): { name: 'kubelet' | 'runtime' | 'misc' | 'pods'; cgroup: string }[] {
    const pods = this.o.cgroupsPerQOS ? cgroupfs(this.qos.guaranteed) : cgroupfs(parseCgroupfs(this.o.cgroupRoot));
    const all = [
      { name: 'kubelet' as const, cgroup: this.kubeletCgroup },
      { name: 'runtime' as const, cgroup: this.o.runtimeCgroups ?? '' },
      { name: 'misc' as const, cgroup: this.o.systemCgroups ?? '' },
      { name: 'pods' as const, cgroup: pods },
    ];
    return all.filter((c) => c.cgroup !== '');
  }

  /**
   * the cgroup manager of the system containers (--kubelet-cgroups, --system-cgroups) and of the
   * Summary's figures: the pods' one, else one over the mounted subsystems (made when first needed)
   */
  private anyManager(): CgroupManager | undefined {
    if (this.cgroups) return this.cgroups;
    if (this.reader === undefined) {
      try {
        this.reader = new CgroupManager(this.o.subsystems ?? detectCgroupSubsystems());
      } catch {
        this.reader = null;
      }
    }
    return this.reader ?? undefined;
  }

  /** a cgroup's figures (cgroupfs name); undefined when it does not exist */
  usage(cgroup: string): CgroupUsage | undefined {
    return this.anyManager()?.usage(parseCgroupfs(cgroup));
  }

  /** the cgroup and those under it (cgroupfs names), parents first; none without a cgroup reader */
  tree(cgroup: string): string[] {
    return (this.anyManager()?.tree(parseCgroupfs(cgroup)) ?? []).map(cgroupfs);
  }

  /** a cgroup's spec and further stats for /metrics/cadvisor; undefined when it does not exist */
  detail(cgroup: string): CgroupDetail | undefined {
    return this.anyManager()?.detail(parseCgroupfs(cgroup));
  }

  /** the pod cgroups' figures, by pod UID (the pods whose cgroup is found under the QoS cgroups) */
  podUsages(): Map<string, CgroupUsage> {
    const out = new Map<string, CgroupUsage>();
    if (!this.cgroups) return out;
    const now = Date.now();
    for (const [uid, name] of this.cgroups.podCgroups([this.qos.besteffort, this.qos.burstable, this.qos.guaranteed])) {
      const u = this.cgroups.usage(name, now);
      if (u) out.set(uid, u);
    }
    return out;
  }

  /**
   * enforceNodeAllocatableCgroups' second part: the system-reserved and kube-reserved cgroups,
   * which must exist, limited to --system-reserved and --kube-reserved (CPU shares, memory, PIDs;
   * the -compressible forms CPU only). Answers the NodeAllocatableEnforced messages; throws a
   * ReservedCgroupError, which stops the kubelet, for a cgroup it cannot limit.
   */
  private enforceReservedCgroups(): string[] {
    const cm = this.cgroups!;
    const out: string[] = [];
    const enforce = this.o.enforceNodeAllocatable;
    for (const who of ['system', 'kube'] as const) {
      const compressible = enforce.includes(`${who}-reserved-compressible`);
      if (!compressible && !enforce.includes(`${who}-reserved`)) continue;
      const path = (who === 'system' ? this.o.systemReservedCgroup : this.o.kubeReservedCgroup) ?? '';
      const rl = (who === 'system' ? this.o.systemReserved : this.o.kubeReserved) ?? {};
      const label = who === 'system' ? 'System' : 'Kube';
      this.o.log.v(2).info(`Enforcing ${who} reserved on cgroup`, { cgroupName: path, limits: rl });
      const name = parseCgroupfs(path);
      // (getCgroupConfig: CPU shares from the reserved CPU; memory and PIDs unless compressible only)
      const rc: ResourceConfig = {};
      if (rl.cpu !== undefined) rc.cpuShares = milliCPUToShares(milli(rl, 'cpu'));
      if (!compressible) {
        if (rl.memory !== undefined) rc.memory = value(rl, 'memory');
        if (rl.pid !== undefined) rc.pidsLimit = value(rl, 'pid');
      }
      let why: string | undefined;
      if (!cm.exists(name)) why = `[${name.map((n) => JSON.stringify(n)).join(' ')}] cgroup does not exist`;
      else {
        try {
          cm.set(name, rc);
        } catch (e) {
          why = (e as Error).message;
        }
      }
      if (why !== undefined) throw new ReservedCgroupError(`Failed to enforce ${label} Reserved Cgroup Limits on ${JSON.stringify(path)}: ${why}`);
      out.push(`Updated limits on ${who} reserved cgroup ${path}`);
    }
    return out;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.kubeletCgroupTimer) clearInterval(this.kubeletCgroupTimer);
  }

  /** UpdateCgroups: Burstable's CPU shares of its pods' requests, BestEffort's 2 */
  updateQOSCgroups(): void {
    if (!this.cgroups) return;
    const pods = this.activePods();
    const besteffort: ResourceConfig = { cpuShares: MIN_SHARES };
    const burstable: ResourceConfig = { cpuShares: burstableCPUShares(pods) };
    const percent = this.o.qosReservedMemoryPercent;
    if (percent !== undefined) {
      // setMemoryReserve: Burstable may use the allocatable memory less the reserved part of the
      // Guaranteed pods' requests, BestEffort that less the reserved part of the Burstable pods'
      const allocatable = nodeAllocatableConfig(this.capacity(), this.o.reserved, true).memory ?? 0;
      if (allocatable > 0) {
        const requested = { Guaranteed: 0, Burstable: 0, BestEffort: 0 } as Record<string, number>;
        for (const p of pods) requested[qosClass(p)] = (requested[qosClass(p)] ?? 0) + podResources(p, 'requests').memory;
        const burstableLimit = Math.trunc(allocatable - (requested.Guaranteed! * percent) / 100);
        burstable.memory = burstableLimit;
        besteffort.memory = Math.trunc(burstableLimit - (requested.Burstable! * percent) / 100);
        this.o.log.v(2).info('QoS pod memory limit', { burstable: burstable.memory, besteffort: besteffort.memory, percentReserve: percent });
      }
    }
    this.cgroups.set(this.qos.besteffort, besteffort);
    this.cgroups.set(this.qos.burstable, burstable);
  }

  /** the sandbox's cgroup parent: /<root>/kubepods/<qos>/pod<uid>; '' without cgroupsPerQOS */
  podCgroupParent(pod: any): string {
    return this.cgroups ? cgroupfs(podCgroupName(this.qos, pod)) : '';
  }

  podCgroupExists(pod: any): boolean {
    return this.cgroups ? this.cgroups.exists(podCgroupName(this.qos, pod)) : true;
  }

  /** the pod cgroup's settings for the pod (with its admitted resources) */
  podConfig(pod: any): ResourceConfig {
    const rc = resourceConfigForPod(pod, this.o.cpuCFSQuota, this.o.cpuCFSQuotaPeriodUs);
    if (this.o.podPidsLimit > 0) rc.pidsLimit = this.o.podPidsLimit;
    return rc;
  }

  /** EnsureExists: the pod's cgroup is made with its settings when it does not exist */
  ensurePodCgroup(pod: any): void {
    if (!this.cgroups) return;
    const name = podCgroupName(this.qos, pod);
    if (this.cgroups.exists(name)) return;
    try {
      this.cgroups.create(name, this.podConfig(pod));
    } catch (e) {
      throw new Error(`failed to create container for ${JSON.stringify(name)} : ${(e as Error).message}`);
    }
  }

  /**
   * An in-place resize's share (doPodResizeAction): the pod cgroup's memory limit, CPU quota and
   * CPU shares moved to the admitted resources' where they grow ('widen', before the containers
   * are updated) or shrink ('narrow', after). A limit the pod no longer declares is left as it is.
   * Returns whether anything was written.
   */
  resizePodCgroup(pod: any, phase: 'widen' | 'narrow'): boolean {
    if (!this.cgroups) return false;
    const name = podCgroupName(this.qos, pod);
    if (!this.cgroups.exists(name)) return false;
    const want = resourceConfigForPod(pod, this.o.cpuCFSQuota, this.o.cpuCFSQuotaPeriodUs);
    const cur = this.cgroups.get(name);
    const unl = (v: number) => (v < 0 || v === Infinity ? Infinity : v);
    const moves = (from: number, to: number) => (phase === 'widen' ? unl(to) > unl(from) : unl(to) < unl(from));
    // (the kernel keeps a memory limit in whole pages)
    const memMoves = (from: number, to: number) => Math.abs(unl(to) - unl(from)) >= 4096 && moves(from, to);
    let wrote = false;
    if (want.memory !== undefined && memMoves(cur.memory, want.memory)) {
      this.cgroups.set(name, { memory: want.memory > 0 ? want.memory : -1 });
      wrote = true;
    }
    if (want.cpuQuota !== undefined && moves(cur.cpuQuota, want.cpuQuota)) {
      this.cgroups.set(name, { cpuQuota: want.cpuQuota, cpuPeriod: want.cpuPeriod });
      wrote = true;
    }
    if (want.cpuShares !== undefined && moves(cur.cpuShares, want.cpuShares)) {
      this.cgroups.set(name, { cpuShares: want.cpuShares });
      wrote = true;
    }
    return wrote;
  }

  /**
   * cleanupOrphanedPodCgroups: the pod cgroups under this kubelet's QoS cgroups whose pods are not
   * in `possiblyRunning` have their processes killed and are removed; one whose volumes are still
   * mounted (`volumesMounted`) only has its CPU shares reduced to 2 meanwhile.
   */
  async cleanupOrphanedPodCgroups(possiblyRunning: Set<string>, volumesMounted: (uid: string) => boolean): Promise<string[]> {
    if (!this.cgroups) return [];
    const removed: string[] = [];
    const found = this.cgroups.podCgroups([this.qos.besteffort, this.qos.burstable, this.qos.guaranteed]);
    for (const [uid, name] of found) {
      if (possiblyRunning.has(uid)) continue;
      if (volumesMounted(uid)) {
        this.o.log.v(3).info('Orphaned pod found, but volumes not yet removed.  Reducing cpu to minimum', { podUID: uid });
        try {
          this.cgroups.set(name, { cpuShares: MIN_SHARES });
        } catch (e) {
          this.o.log.info('Failed to reduce cpu time for pod pending volume cleanup', { podUID: uid, err: (e as Error).message });
        }
        continue;
      }
      this.o.log.v(3).info('Orphaned pod found, removing pod cgroups', { podUID: uid });
      try {
        await this.destroy(name);
        removed.push(uid);
      } catch (e) {
        // (the next housekeeping tries again)
        this.o.log.info('Failed to delete cgroup paths', { cgroupName: name, err: (e as Error).message });
      }
    }
    return removed;
  }

  /** Destroy: the processes left in the pod cgroup killed (5 tries), then its paths removed */
  async destroy(name: CgroupName): Promise<void> {
    const cm = this.cgroups!;
    const killed = new Set<number>();
    for (let i = 0; i < 5; i++) {
      const pids = cm.pids(name).filter((p) => !killed.has(p) && p !== process.pid);
      if (!pids.length) break;
      for (const p of pids) {
        try {
          process.kill(p, 'SIGKILL');
          killed.add(p);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ESRCH') killed.add(p);
        }
      }
    }
    // (the killed processes leave their cgroups as they exit)
    for (let i = 0; i < 50 && cm.pids(name).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    cm.remove(name);
  }
}
