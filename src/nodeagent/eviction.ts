// The kubelet's eviction manager: every 10 s it observes the node's signals, sets the pressure
// conditions, refuses new pods under pressure, and evicts one pod at a time while a threshold is
// met, as the kubelet's eviction manager (pkg/kubelet/eviction) does.
//
// Signals, each an available amount beside its capacity:
//   memory.available            the node's memory less its working set (/proc/meminfo)
//   nodefs.available/inodesFree the file system of --root-dir (statfs)
//   imagefs.*, containerfs.*    the same file system (the runtime's image file system is not asked)
//   pid.available               kernel.pid_max less the tasks the kernel runs (/proc/loadavg)
// (allocatableMemory.available is accepted and not observed.)
//
// A hard threshold is met when the signal's available amount is below it; a soft one once it has
// been below it for its grace period. A met threshold stays met until the signal is back above it
// by its minimum reclaim. The conditions follow every threshold met (soft ones before their grace
// period too), and stay for --eviction-pressure-transition-period after the last was seen:
//   memory.* -> MemoryPressure; nodefs.*, imagefs.*, containerfs.* -> DiskPressure; pid.* -> PIDPressure.
// Under MemoryPressure a BestEffort pod is not admitted; under DiskPressure no pod is (both fail
// with reason Evicted and "The node had condition: [X]. ", as the kubelet's admission says).
//
// Eviction ranks the active pods as the kubelet does for memory, and for ephemeral storage with
// the pods' local storage measured (ephemeral.ts): those using more than they request first, then
// the lower priority, then the most use above the request. For the other resources (inodes, pids,
// whose use per pod is not measured here): the lower priority, then the most memory.
//
// Every round, before the thresholds, the local storage limits (localStorageCapacityIsolation):
// a pod over an emptyDir's sizeLimit, over the sum of its containers' ephemeral-storage limits, or
// with a container over its own, is evicted at once without the DisruptionTarget condition
// (the kubelet's localStorageEviction).
// The evicted pod fails with reason Evicted, the kubelet's message and the DisruptionTarget
// condition; its containers get no grace for a hard threshold (1 s), and for a soft one the
// smaller of --eviction-max-pod-grace-period and the pod's own.
//
// Before it evicts for a nodefs.* or imagefs.* threshold, it deletes the unused containers (the
// dead ones of ended pods: pods.ts' deleteUnusedContainers) and the unused images (the image
// garbage collector's deleteUnusedImages, imagegc.ts), and observes again: when no threshold is
// met any more (counting the minimum reclaims, not the grace periods), no pod is evicted, as the
// kubelet's node-level reclaim.
import { statfsSync } from 'node:fs';
import { totalmem } from 'node:os';
import type { Logger } from '../client/log.js';
import { canonical, parseQuantity, quantityValue } from '../schema/validation/quantity.js';
import type { EvictionThreshold } from './options.js';
import { qosClass } from './podspec.js';
import { isCriticalPod } from './staticpods.js';
import { hostMemory, processLimits, type ResourceSample } from './stats.js';
import type { PodStorage } from './ephemeral.js';

export const MONITORING_PERIOD_MS = 10_000;
/** the grace period of a hard eviction (the kubelet's immediateEvictionGracePeriodSeconds) */
const IMMEDIATE_GRACE_SECONDS = 1;

export type Pressure = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

export interface Observation {
  available: number;
  capacity: number;
}

export interface EvictionManagerOptions {
  thresholds: EvictionThreshold[];
  pressureTransitionPeriodMs: number;
  /** --eviction-max-pod-grace-period (soft evictions); <= 0: the pod's own */
  maxPodGracePeriodSeconds: number;
  rootDir: string;
  /** the containers' memory (the /metrics/resource sampler) */
  sample: () => Promise<ResourceSample>;
  pods: { activePods(): any[]; evict(uid: string, message: string, graceSeconds: number, disruptionTarget?: boolean): Promise<boolean> };
  /**
   * a pod's use of local storage (ephemeral.ts), for the local storage limits
   * (localStorageCapacityIsolation); absent: they are not enforced
   */
  localStorage?: (pod: any) => Promise<PodStorage>;
  /** an event on the node (EvictionThresholdMet) */
  nodeEvent: (type: 'Normal' | 'Warning', reason: string, message: string) => void;
  log: Logger;
  /** the node-level reclaim of nodefs.* and imagefs.*: the dead containers (pods.ts), then the unused images (imagegc.ts) */
  deleteUnusedContainers?: () => Promise<void>;
  deleteUnusedImages?: () => Promise<void>;
  /** the signals as observed now (tests give their own) */
  observe?: () => Map<string, Observation>;
  periodMs?: number;
}

function pressureOf(signal: string): Pressure {
  if (signal.startsWith('memory.') || signal.startsWith('allocatableMemory.')) return 'MemoryPressure';
  if (signal.startsWith('pid.')) return 'PIDPressure';
  return 'DiskPressure';
}

/** the resource a signal starves, as the kubelet's messages name it */
function resourceOf(signal: string): string {
  if (signal.startsWith('memory.') || signal.startsWith('allocatableMemory.')) return 'memory';
  if (signal.startsWith('pid.')) return 'pids';
  return signal.endsWith('inodesFree') ? 'inodes' : 'ephemeral-storage';
}

function bytes(q: string | undefined): number {
  const p = q === undefined ? null : parseQuantity(q);
  return p ? Number(quantityValue(p)) : 0;
}

/** a threshold's amount for a signal of this capacity */
function amount(v: { quantity?: string; percentage?: number } | undefined, capacity: number): number {
  if (!v) return 0;
  return v.percentage !== undefined ? Math.round(v.percentage * capacity) : bytes(v.quantity);
}

/** the amount in the unit the kubelet prints it: a quantity for bytes, a plain count for inodes and pids */
function shown(signal: string, n: number): string {
  const r = resourceOf(signal);
  if (r === 'inodes' || r === 'pids') return String(n);
  if (n >= 1024 && n % 1024 === 0) {
    const units = ['Ki', 'Mi', 'Gi', 'Ti', 'Pi'];
    let v = n;
    let u = -1;
    while (v % 1024 === 0 && v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return `${v}${units[u]}`;
  }
  return n >= 1024 ? `${Math.round(n / 1024)}Ki` : String(n);
}

/** the signals of the node now */
export function observeNode(rootDir: string): Map<string, Observation> {
  const out = new Map<string, Observation>();
  const mem = hostMemory();
  const capacity = totalmem();
  out.set('memory.available', { available: Math.max(0, capacity - mem.workingSetBytes), capacity });
  try {
    const s = statfsSync(rootDir);
    const fs = { available: s.bavail * s.bsize, capacity: s.blocks * s.bsize };
    const inodes = { available: s.ffree, capacity: s.files };
    for (const p of ['nodefs', 'imagefs', 'containerfs']) {
      out.set(`${p}.available`, fs);
      out.set(`${p}.inodesFree`, inodes);
    }
  } catch {
    /* the root directory's file system cannot be asked: no disk signals */
  }
  const pids = processLimits();
  if (pids) out.set('pid.available', { available: pids.maxpid - pids.curproc, capacity: pids.maxpid });
  return out;
}

const priorityOf = (pod: any): number => (typeof pod.spec?.priority === 'number' ? pod.spec.priority : 0);

/** the sum of the pod's containers' requests of a resource (memory: the limit when no request) */
function podRequest(pod: any, resource: 'memory' | 'ephemeral-storage'): number {
  let n = 0;
  for (const c of pod.spec?.containers ?? []) n += bytes(c.resources?.requests?.[resource] ?? (resource === 'memory' ? c.resources?.limits?.memory : undefined));
  return n;
}

export class EvictionManager {
  /** when each threshold (by index) was first seen met, and whether it is met now */
  private firstMet = new Map<number, number>();
  private met = new Set<number>();
  /** when each condition was last seen */
  private lastSeen = new Map<Pressure, number>();
  /** the conditions as the last round set them (held until the next, as the kubelet holds them) */
  private current = new Set<Pressure>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(private readonly o: EvictionManagerOptions) {}

  start(): void {
    if (this.o.thresholds.some((t) => t.signal === 'allocatableMemory.available')) this.o.log.info('Eviction signal allocatableMemory.available is accepted and not observed');
    const tick = () => {
      if (this.running) return;
      this.running = true;
      this.synchronize()
        .catch((e) => this.o.log.error(e, 'Eviction manager: failed to synchronize'))
        .finally(() => (this.running = false));
    };
    tick();
    this.timer = setInterval(tick, this.o.periodMs ?? MONITORING_PERIOD_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** the pressure conditions as the last round found them (a threshold met, or one seen within the transition period) */
  conditions(): ReadonlySet<Pressure> {
    return this.current;
  }

  /** the kubelet's admission under pressure: undefined admits the pod */
  admit(pod: any): { reason: string; message: string } | undefined {
    const c = this.current;
    // (critical pods are admitted whatever the pressure)
    if (c.size === 0 || isCriticalPod(pod)) return undefined;
    if (c.has('DiskPressure')) return { reason: 'Evicted', message: 'The node had condition: [DiskPressure]. ' };
    if (c.has('MemoryPressure') && qosClass(pod) === 'BestEffort') return { reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' };
    if (c.has('PIDPressure') && qosClass(pod) === 'BestEffort') return { reason: 'Evicted', message: 'The node had condition: [PIDPressure]. ' };
    return undefined;
  }

  /** one round: observe, update the thresholds met and the conditions, evict at most one pod */
  async synchronize(now = Date.now()): Promise<string | undefined> {
    const obs = (this.o.observe ?? (() => observeNode(this.o.rootDir)))();
    const due: { t: EvictionThreshold; o: Observation; below: number }[] = [];
    for (const [i, t] of this.o.thresholds.entries()) {
      const o = obs.get(t.signal);
      if (!o) continue;
      const threshold = amount(t.value, o.capacity);
      const reclaim = amount(t.minReclaim, o.capacity);
      // met: below the threshold, or (once met) not yet above it by the minimum reclaim
      const isMet = o.available < threshold || (this.met.has(i) && o.available < threshold + reclaim);
      if (!isMet) {
        this.met.delete(i);
        this.firstMet.delete(i);
        continue;
      }
      if (!this.met.has(i)) {
        this.met.add(i);
        this.firstMet.set(i, now);
      }
      this.lastSeen.set(pressureOf(t.signal), now);
      if (now - this.firstMet.get(i)! >= t.gracePeriod) due.push({ t, o, below: threshold });
    }
    const current = new Set<Pressure>();
    for (const [p, t] of this.lastSeen) if (now - t < this.o.pressureTransitionPeriodMs || now === t) current.add(p);
    for (const p of current) if (!this.current.has(p)) this.o.log.info('Eviction manager: node condition observed', { condition: p });
    this.current = current;
    // the local storage limits come first; a round that evicts for them does nothing else
    const overLimit = await this.localStorageEviction();
    if (overLimit) return overLimit;
    if (due.length === 0) return undefined;
    // memory first, as the kubelet orders the starved resources
    due.sort((a, b) => Number(resourceOf(b.t.signal) === 'memory') - Number(resourceOf(a.t.signal) === 'memory'));
    const { t, o, below } = due[0]!;
    const resource = resourceOf(t.signal);
    this.o.log.info('Eviction manager: attempting to reclaim', { resourceName: resource });
    this.o.nodeEvent('Warning', 'EvictionThresholdMet', `Attempting to reclaim ${resource}`);
    if (await this.reclaimNodeLevelResources(t.signal, resource)) {
      this.o.log.info('Eviction manager: able to reduce resource pressure without evicting pods.', { resourceName: resource });
      return undefined;
    }
    const pods = this.o.pods.activePods();
    if (pods.length === 0) {
      this.o.log.info('Eviction manager: must evict pod(s) to reclaim, but no pod is active', { resourceName: resource });
      return undefined;
    }
    // what each pod uses of the resource: memory, or (measured) ephemeral storage; for the other
    // resources, memory ranks the pods of one priority
    const measured = resource === 'memory' || (resource === 'ephemeral-storage' && this.o.localStorage !== undefined);
    const ranking = resource === 'ephemeral-storage' && this.o.localStorage ? 'ephemeral-storage' : 'memory';
    const usage = ranking === 'memory' ? await this.memoryUsage() : await this.storageUsage(pods);
    const used = (p: any) => usage.get(p.metadata.uid)?.total ?? 0;
    const req = (p: any) => podRequest(p, ranking);
    const ranked = [...pods].sort((a, b) => {
      if (measured) {
        const ea = Number(used(a) > req(a));
        const eb = Number(used(b) > req(b));
        if (ea !== eb) return eb - ea;
      }
      if (priorityOf(a) !== priorityOf(b)) return priorityOf(a) - priorityOf(b);
      return used(b) - req(b) - (used(a) - req(a));
    });
    const pod = ranked[0]!;
    let message = `The node was low on resource: ${resource}. Threshold quantity: ${shown(t.signal, below)}, available: ${shown(t.signal, o.available)}. `;
    if (measured) {
      for (const c of pod.spec?.containers ?? []) {
        const u = usage.get(pod.metadata.uid)?.byContainer.get(c.name);
        const r = c.resources?.requests?.[resource];
        if (u !== undefined && u > bytes(r)) message += `Container ${c.name} was using ${shown('memory.available', u)}, request is ${r ?? '0'}, has larger consumption of ${resource}. `;
      }
    }
    const podGrace = Number(pod.spec?.terminationGracePeriodSeconds ?? 30);
    const grace = t.gracePeriod === 0 ? IMMEDIATE_GRACE_SECONDS : this.o.maxPodGracePeriodSeconds > 0 ? Math.min(this.o.maxPodGracePeriodSeconds, podGrace) : podGrace;
    this.o.log.info('Eviction manager: evicting pod', { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, message });
    await this.o.pods.evict(pod.metadata.uid, message, grace);
    return `${pod.metadata.namespace}/${pod.metadata.name}`;
  }

  /** the containers' working sets, by pod (none when the sampler fails: ranked by priority alone) */
  private async memoryUsage(): Promise<Map<string, { total: number; byContainer: Map<string, number> }>> {
    const usage = new Map<string, { total: number; byContainer: Map<string, number> }>();
    try {
      for (const c of (await this.o.sample()).containers) {
        if (!c.memory) continue;
        let u = usage.get(c.podUID);
        if (!u) usage.set(c.podUID, (u = { total: 0, byContainer: new Map() }));
        u.total += c.memory.workingSetBytes;
        u.byContainer.set(c.container, c.memory.workingSetBytes);
      }
    } catch {
      /* no usage */
    }
    return usage;
  }

  /** the pods' ephemeral storage, and their containers' (writable layer and logs) */
  private async storageUsage(pods: any[]): Promise<Map<string, { total: number; byContainer: Map<string, number> }>> {
    const usage = new Map<string, { total: number; byContainer: Map<string, number> }>();
    for (const p of pods) {
      try {
        const st = await this.o.localStorage!(p);
        usage.set(p.metadata.uid, { total: st.ephemeralBytes, byContainer: new Map(st.containers.map((c) => [c.name, c.rootfsBytes + c.logsBytes])) });
      } catch {
        /* not measured: no use */
      }
    }
    return usage;
  }

  /**
   * The kubelet's localStorageEviction: every active pod whose emptyDir exceeds its sizeLimit, whose
   * ephemeral storage exceeds the sum of its containers' ephemeral-storage limits, or one of whose
   * containers (writable layer and logs) exceeds its own limit, is evicted at once, without the
   * DisruptionTarget condition. Returns the pods evicted ("ns/name, ..."), if any.
   */
  private async localStorageEviction(): Promise<string | undefined> {
    if (!this.o.localStorage) return undefined;
    const evicted: string[] = [];
    for (const pod of this.o.pods.activePods()) {
      let st: PodStorage;
      try {
        st = await this.o.localStorage(pod);
      } catch {
        continue;
      }
      const message = overLocalLimit(pod, st);
      if (!message) continue;
      this.o.log.info('Eviction manager: evicting pod for its local storage', { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, message });
      if (await this.o.pods.evict(pod.metadata.uid, message, 0, false)) evicted.push(`${pod.metadata.namespace}/${pod.metadata.name}`);
    }
    return evicted.length ? evicted.join(', ') : undefined;
  }

  /** the node-level reclaim of a disk signal: true when, observed again, no threshold is met */
  private async reclaimNodeLevelResources(signal: string, resource: string): Promise<boolean> {
    const steps = [this.o.deleteUnusedContainers, this.o.deleteUnusedImages].filter((f) => f !== undefined);
    if (!steps.length || !/^(nodefs|imagefs)\./.test(signal)) return false;
    for (const step of steps) {
      try {
        await step();
      } catch (e) {
        this.o.log.info('Eviction manager: unexpected error when attempting to reduce resource pressure', { resourceName: resource, err: (e as Error).message ?? String(e) });
      }
    }
    const obs = (this.o.observe ?? (() => observeNode(this.o.rootDir)))();
    return this.o.thresholds.every((t) => {
      const o = obs.get(t.signal);
      return !o || o.available >= amount(t.value, o.capacity) + amount(t.minReclaim, o.capacity);
    });
  }
}

/**
 * Go's String() of a sum of quantities: the canonical form, in the binary units of the first
 * (a Quantity sum keeps its receiver's format)
 */
function sumString(total: number, first: unknown): string {
  return /i$/.test(String(first)) ? shown('nodefs.available', total) : canonical(String(total));
}

/** why a pod's local storage is over a limit (the kubelet's messages), or undefined */
export function overLocalLimit(pod: any, st: PodStorage): string | undefined {
  const used = new Map(st.volumes.map((v) => [v.name, v.usedBytes]));
  for (const v of pod.spec?.volumes ?? []) {
    const limit = v?.emptyDir?.sizeLimit;
    if (limit === undefined || limit === null) continue;
    const size = bytes(limit);
    const u = used.get(v.name);
    if (u !== undefined && size > 0 && u > size) return `Usage of EmptyDir volume ${JSON.stringify(v.name)} exceeds the limit ${JSON.stringify(canonical(limit))}. `;
  }
  // the pod's limit: the sum of its containers' (an init container's larger one counts, as PodLimits has it)
  const limits = (cs: any[]): string[] => cs.map((c) => c?.resources?.limits?.['ephemeral-storage']).filter((l) => l !== undefined && l !== null).map(String);
  const regular = limits(pod.spec?.containers ?? []);
  const init = limits(pod.spec?.initContainers ?? []);
  if (regular.length || init.length) {
    const sum = regular.reduce((a, l) => a + bytes(l), 0);
    const total = Math.max(sum, ...init.map((l) => bytes(l)));
    const shownLimit = regular.length + init.length === 1 ? canonical([...regular, ...init][0]) : sumString(total, regular[0] ?? init[0]);
    if (st.ephemeralBytes > total) return `Pod ephemeral local storage usage exceeds the total limit of containers ${shownLimit}. `;
  }
  for (const c of pod.spec?.containers ?? []) {
    const limit = c?.resources?.limits?.['ephemeral-storage'];
    if (limit === undefined || limit === null || bytes(limit) === 0) continue;
    const cs = st.containers.find((x) => x.name === c.name);
    if (cs && cs.rootfsBytes + cs.logsBytes > bytes(limit)) return `Container ${c.name} exceeded its local ephemeral storage limit ${JSON.stringify(canonical(limit))}. `;
  }
  return undefined;
}
