// A pod's use of the node's local storage, as the kubelet's stats provider sums it for the
// eviction manager's local storage limits (localStorageCapacityIsolation) and /stats/summary:
//   - its volumes: what each emptyDir, configMap, secret, downwardAPI and projected volume
//     directory takes (diskusage.ts), measured again once every volumeStatsAggPeriod (the
//     kubelet's fs resource analyzer; a negative period turns the volume figures off);
//   - each container: its writable layer (the runtime's ContainerStats) and its log directory;
//   - the pod's ephemeral storage: its local ephemeral volumes (emptyDir of the default medium,
//     configMap: the kubelet's IsLocalEphemeralVolume), its containers' writable layers and logs,
//     and its etc-hosts file.
// The image file system is the node's here (no dedicated image fs), so a container's writable
// layer counts toward its ephemeral storage, as the kubelet counts it without one.
import { join } from 'node:path';
import type { CRIClient } from './cri.js';
import { diskUsage, type DiskUsage } from './diskusage.js';
import { L_POD_UID, podLogDir } from './podspec.js';
import { PLUGIN_DIRS, volumeType } from './volumes.js';

export interface VolumeUsage extends DiskUsage {
  name: string;
}

export interface ContainerStorage {
  name: string;
  rootfsBytes: number;
  logsBytes: number;
}

export interface PodStorage {
  volumes: VolumeUsage[];
  containers: ContainerStorage[];
  /** the pod's ephemeral storage (see the head of this file) */
  ephemeralBytes: number;
  /** when the figures were taken (ms) */
  time: number;
}

export interface LocalStorageOptions {
  rootDir: string;
  podLogsDir: string;
  cri: Pick<CRIClient, 'listContainerStats'>;
  /** volumeStatsAggPeriod (ms); negative: no volume figures */
  volumeStatsAggPeriodMs: number;
  now?: () => number;
}

/** the kubelet's IsLocalEphemeralVolume */
function isLocalEphemeral(v: any): boolean {
  const t = volumeType(v);
  return (t === 'emptyDir' && !v.emptyDir?.medium) || t === 'configMap' || v?.gitRepo !== undefined;
}

export class LocalStorageStats {
  /** per pod UID: its volumes' figures and when they were taken */
  private readonly volumes = new Map<string, { at: number; usage: Promise<VolumeUsage[]> }>();
  private readonly now: () => number;

  constructor(private readonly o: LocalStorageOptions) {
    this.now = o.now ?? Date.now;
  }

  /** the volumes' figures, measured again when older than the period */
  private volumeUsage(pod: any): Promise<VolumeUsage[]> {
    const uid: string = pod.metadata.uid;
    if (this.o.volumeStatsAggPeriodMs < 0) return Promise.resolve([]);
    const cached = this.volumes.get(uid);
    const now = this.now();
    // (the figures of pods not asked about for a while go: those pods are gone)
    const stale = now - Math.max(3 * this.o.volumeStatsAggPeriodMs, 60_000);
    for (const [k, v] of this.volumes) if (v.at < stale) this.volumes.delete(k);
    if (cached && now - cached.at < this.o.volumeStatsAggPeriodMs) return cached.usage;
    const usage = (async () => {
      const out: VolumeUsage[] = [];
      for (const v of pod.spec?.volumes ?? []) {
        const dir = PLUGIN_DIRS[volumeType(v)];
        if (!dir) continue;
        out.push({ name: v.name, ...(await diskUsage(join(this.o.rootDir, 'pods', uid, 'volumes', dir, v.name))) });
      }
      return out;
    })();
    this.volumes.set(uid, { at: now, usage });
    return usage;
  }

  /** the figures of one pod */
  async podStorage(pod: any): Promise<PodStorage> {
    const uid: string = pod.metadata.uid;
    const [volumes, stats] = await Promise.all([
      this.volumeUsage(pod),
      this.o.cri.listContainerStats({ labelSelector: { [L_POD_UID]: uid } }).catch(() => []),
    ]);
    const rootfs = new Map<string, number>();
    for (const s of stats) {
      const name = s.attributes?.metadata?.name;
      if (name) rootfs.set(name, Number(s.writableLayer?.usedBytes?.value ?? 0));
    }
    const logDir = podLogDir(pod, this.o.podLogsDir);
    const containers: ContainerStorage[] = [];
    for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
      const logs = await diskUsage(join(logDir, c.name));
      containers.push({ name: c.name, rootfsBytes: rootfs.get(c.name) ?? 0, logsBytes: logs.usedBytes });
    }
    const byName = new Map((pod.spec?.volumes ?? []).map((v: any) => [v.name, v]));
    let ephemeralBytes = (await diskUsage(join(this.o.rootDir, 'pods', uid, 'etc-hosts'))).usedBytes;
    for (const v of volumes) if (isLocalEphemeral(byName.get(v.name))) ephemeralBytes += v.usedBytes;
    for (const c of containers) ephemeralBytes += c.rootfsBytes + c.logsBytes;
    return { volumes, containers, ephemeralBytes, time: this.now() };
  }
}
