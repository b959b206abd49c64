// The built-in Resource Metrics API's data: what a kubelet's /metrics/resource says (decodeBatch),
// and the two latest points of each node and container (MetricsStorage), from which usage is
// computed as metrics-server 0.7 computes it (its pkg/scraper/client/resource and pkg/storage):
//
// - a point is a cumulative CPU time (core-nanoseconds, uint64(seconds * 1e9)), a memory working
//   set (bytes), the time of the sample (the series' timestamp, in ms, else the time the request
//   was sent) and, for a container, its start time;
// - a node point needs node_cpu_usage_seconds_total and node_memory_working_set_bytes, both
//   non-zero; a pod's containers each need their CPU and memory non-zero, or the pod is left out;
// - each scrape replaces the stored batch: the new point is `last`, and the previous `last`
//   becomes `prev` when the new one is later (a container only while it was started before that
//   point: a restarted container starts again); a node or pod missing from a scrape is forgotten;
// - usage: CPU = (last - prev) / window, in nanocores (cpu "<n>n" in its canonical form), memory =
//   last's working set (BinarySI: "<n>Ki"), timestamp = last's, window = last - prev; a pod's
//   timestamp and window are those of its earliest container, and a pod shows only when every
//   container has two points;
// - a container started less than one resolution ago (but at least 10 s) counts from its start
//   with zero CPU, so that a new container shows after one scrape.
// Times are kept in nanoseconds (bigint), as Go's time.Time, so that windows print as Go prints
// them ("15.043s").
import { quantityString } from '../../schema/validation/quantity.js';

export interface MetricsPoint {
  /** ns since the epoch (containers only; 0n for nodes) */
  startTime: bigint;
  /** ns since the epoch */
  timestamp: bigint;
  /** core-nanoseconds */
  cpu: bigint;
  /** bytes */
  memory: bigint;
}

export interface PodPoint {
  /** by container name, in the order the kubelet listed them */
  containers: Map<string, MetricsPoint>;
}

export interface MetricsBatch {
  nodes: Map<string, MetricsPoint>;
  /** by "<namespace>/<name>" */
  pods: Map<string, PodPoint>;
}

const ZERO: MetricsPoint = { startTime: 0n, timestamp: 0n, cpu: 0n, memory: 0n };

/** Go's uint64(v) of a float64 (v >= 0): its integer part, exactly */
function u64(v: number): bigint {
  if (!Number.isFinite(v) || v <= 0) return 0n;
  return BigInt(Math.trunc(v));
}

/** a label's value in a Prometheus series' label set ({a="x",b="y\"z"}) */
function labelValues(set: string): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  while (i < set.length) {
    const eq = set.indexOf('=', i);
    if (eq < 0) break;
    const name = set.slice(i, eq).replace(/^[\s,{]+/, '').trim();
    let j = set.indexOf('"', eq);
    if (j < 0) break;
    j++;
    let v = '';
    for (; j < set.length && set[j] !== '"'; j++) {
      if (set[j] === '\\' && j + 1 < set.length) {
        const n = set[++j];
        v += n === 'n' ? '\n' : n;
      } else v += set[j];
    }
    out.set(name, v);
    i = j + 1;
  }
  return out;
}

/**
 * A kubelet's /metrics/resource text as a batch (decodeBatch): the node's point under `nodeName`,
 * and each pod's containers. `requestTimeMs`: the timestamp of series that carry none.
 */
export function decodeBatch(text: string, requestTimeMs: number, nodeName: string): MetricsBatch {
  const batch: MetricsBatch = { nodes: new Map(), pods: new Map() };
  const node: MetricsPoint = { ...ZERO };
  const pods = new Map<string, Map<string, MetricsPoint>>();
  const containerOf = (labels: string): MetricsPoint => {
    const l = labelValues(labels);
    const key = `${l.get('namespace') ?? ''}/${l.get('pod') ?? ''}`;
    let p = pods.get(key);
    if (!p) pods.set(key, (p = new Map()));
    const name = l.get('container') ?? '';
    let c = p.get(name);
    if (!c) p.set(name, (c = { ...ZERO }));
    return c;
  };
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const brace = line.indexOf('{');
    const space = line.indexOf(' ');
    let name: string;
    let labels = '';
    let rest: string;
    if (brace >= 0 && (space < 0 || brace < space)) {
      name = line.slice(0, brace);
      const close = line.lastIndexOf('}');
      if (close < brace) continue;
      labels = line.slice(brace, close + 1);
      rest = line.slice(close + 1).trim();
    } else {
      if (space < 0) continue;
      name = line.slice(0, space);
      rest = line.slice(space + 1).trim();
    }
    const [valueText, tsText] = rest.split(/\s+/);
    const value = Number(valueText);
    if (valueText === undefined || Number.isNaN(value)) continue;
    const tsMs = tsText !== undefined && /^-?\d+$/.test(tsText) ? Number(tsText) : requestTimeMs;
    const ts = BigInt(Math.trunc(tsMs)) * 1_000_000n;
    switch (name) {
      case 'node_cpu_usage_seconds_total':
        node.cpu = u64(value * 1e9);
        node.timestamp = ts;
        break;
      case 'node_memory_working_set_bytes':
        node.memory = u64(value);
        node.timestamp = ts;
        break;
      case 'container_cpu_usage_seconds_total': {
        const c = containerOf(labels);
        c.cpu = u64(value * 1e9);
        c.timestamp = ts;
        break;
      }
      case 'container_memory_working_set_bytes': {
        const c = containerOf(labels);
        c.memory = u64(value);
        c.timestamp = ts;
        break;
      }
      case 'container_start_time_seconds':
        containerOf(labels).startTime = BigInt(Math.trunc(value * 1e9));
        break;
      default:
        break;
    }
  }
  if (node.timestamp !== 0n && node.cpu !== 0n && node.memory !== 0n) batch.nodes.set(nodeName, node);
  for (const [key, containers] of pods) {
    // (a container with a series but without CPU or memory leaves its whole pod out)
    let complete = true;
    const kept = new Map<string, MetricsPoint>();
    for (const [name, c] of containers) {
      if (c.startTime === 0n && c.timestamp === 0n && c.cpu === 0n && c.memory === 0n) continue;
      if (c.cpu === 0n || c.memory === 0n) {
        complete = false;
        break;
      }
      kept.set(name, c);
    }
    if (complete && containers.size > 0) batch.pods.set(key, { containers: kept });
  }
  return batch;
}

/** Go's time.Duration.Seconds() of a duration in ns */
function seconds(ns: bigint): number {
  const sec = ns / 1_000_000_000n;
  const nsec = ns % 1_000_000_000n;
  return Number(sec) + Number(nsec) / 1e9;
}

export interface Usage {
  /** the canonical quantities, cpu and memory */
  usage: { cpu: string; memory: string };
  /** for sums (tables) */
  cpuNanos: bigint;
  memoryBytes: bigint;
  timestamp: bigint;
  window: bigint;
}

/** resourceUsage: the usage between two points, or undefined when they go backwards */
export function resourceUsage(last: MetricsPoint, prev: MetricsPoint): Usage | undefined {
  if (last.startTime < prev.startTime) return undefined;
  if (last.cpu < prev.cpu) return undefined;
  const window = last.timestamp - prev.timestamp;
  if (window <= 0n) return undefined;
  const rate = Number(last.cpu - prev.cpu) / seconds(window);
  const cpuNanos = u64(rate);
  return {
    usage: { cpu: cpuQuantity(cpuNanos), memory: memoryQuantity(last.memory) },
    cpuNanos,
    memoryBytes: last.memory,
    timestamp: last.timestamp,
    window,
  };
}

export function cpuQuantity(nanocores: bigint): string {
  return quantityString({ nano: nanocores, format: 'DecimalSI' });
}

export function memoryQuantity(bytes: bigint): string {
  return quantityString({ nano: bytes * 1_000_000_000n, format: 'BinarySI' });
}

/** a fresh container's CPU counts from its start if it started this long ago or more */
const FRESH_CONTAINER_MIN_NS = 10_000_000_000n;

export interface ContainerUsage extends Usage {
  name: string;
}

/** the two latest points of every node and pod container (metrics-server's storage) */
export class MetricsStorage {
  private lastNodes = new Map<string, MetricsPoint>();
  private prevNodes = new Map<string, MetricsPoint>();
  private lastPods = new Map<string, PodPoint>();
  private prevPods = new Map<string, PodPoint>();

  constructor(private readonly resolutionNs: bigint) {}

  /** a scrape's batch replaces what was stored */
  store(batch: MetricsBatch): void {
    const lastNodes = new Map<string, MetricsPoint>();
    const prevNodes = new Map<string, MetricsPoint>();
    for (const [name, p] of batch.nodes) {
      lastNodes.set(name, p);
      const last = this.lastNodes.get(name);
      if (!last) continue;
      if (p.timestamp > last.timestamp) prevNodes.set(name, last);
      else {
        const prev = this.prevNodes.get(name);
        if (prev && prev.timestamp < p.timestamp) prevNodes.set(name, prev);
      }
    }
    this.lastNodes = lastNodes;
    this.prevNodes = prevNodes;

    const lastPods = new Map<string, PodPoint>();
    const prevPods = new Map<string, PodPoint>();
    for (const [key, pod] of batch.pods) {
      const newLast: PodPoint = { containers: new Map() };
      const newPrev: PodPoint = { containers: new Map() };
      const oldLast = this.lastPods.get(key);
      const oldPrev = this.prevPods.get(key);
      for (const [name, p] of pod.containers) {
        newLast.containers.set(name, p);
        const age = p.timestamp - p.startTime;
        if (p.startTime < p.timestamp && age < this.resolutionNs && age >= FRESH_CONTAINER_MIN_NS) {
          newPrev.containers.set(name, { ...p, timestamp: p.startTime, cpu: 0n });
          continue;
        }
        const lastC = oldLast?.containers.get(name);
        if (!lastC || !(p.startTime < lastC.timestamp)) continue;
        if (p.timestamp > lastC.timestamp) newPrev.containers.set(name, lastC);
        else {
          const prevC = oldPrev?.containers.get(name);
          if (prevC && prevC.timestamp < p.timestamp) newPrev.containers.set(name, prevC);
        }
      }
      if (newPrev.containers.size > 0) prevPods.set(key, newPrev);
      lastPods.set(key, newLast);
    }
    this.lastPods = lastPods;
    this.prevPods = prevPods;
  }

  /** a node's usage, when it has two points */
  node(name: string): Usage | undefined {
    const last = this.lastNodes.get(name);
    const prev = this.prevNodes.get(name);
    if (!last || !prev) return undefined;
    return resourceUsage(last, prev);
  }

  /** a pod's containers' usage and its (earliest) timestamp and window, when every container has two points */
  pod(namespace: string, name: string): { containers: ContainerUsage[]; timestamp: bigint; window: bigint } | undefined {
    const key = `${namespace}/${name}`;
    const last = this.lastPods.get(key);
    const prev = this.prevPods.get(key);
    if (!last || !prev) return undefined;
    const containers: ContainerUsage[] = [];
    let earliest: Usage | undefined;
    for (const [c, lastC] of last.containers) {
      const prevC = prev.containers.get(c);
      if (!prevC) return undefined;
      const u = resourceUsage(lastC, prevC);
      if (!u) continue;
      containers.push({ name: c, ...u });
      if (!earliest || earliest.timestamp > u.timestamp) earliest = u;
    }
    return { containers, timestamp: earliest?.timestamp ?? 0n, window: earliest?.window ?? 0n };
  }

  /** node points and container points held (for the log) */
  counts(): { nodes: number; pods: number } {
    return { nodes: this.prevNodes.size, pods: this.prevPods.size };
  }
}
