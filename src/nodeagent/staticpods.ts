// Static pods: the pods of manifest files (--pod-manifest-path / staticPodPath, read every
// --file-check-frequency; a file or a directory of files, dot files ignored) and of a URL
// (--manifest-url / staticPodURL with its headers, read every --http-check-frequency), as the
// kubelet's file and HTTP config sources give them (pkg/kubelet/config/file.go, http.go,
// common.go):
//   - each file holds one Pod (JSON or YAML); the URL one Pod or a PodList;
//   - the pod is defaulted as the kubelet does: its UID a hash of the node, the source and the
//     manifest (so an unchanged manifest keeps its UID across restarts, and any change gives a new
//     pod), its name suffixed with `-<node name>`, namespace `default`, spec.nodeName this node,
//     the annotations kubernetes.io/config.hash, config.source and config.seen, and a toleration
//     of every NoExecute taint;
//   - a manifest that cannot be read or decoded is reported and skipped; the others stay.
// The pod workers run these pods themselves and keep a mirror pod of each in the API server.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import type { Logger } from '../client/log.js';

export const CONFIG_HASH = 'kubernetes.io/config.hash';
export const CONFIG_SOURCE = 'kubernetes.io/config.source';
export const CONFIG_SEEN = 'kubernetes.io/config.seen';
export const CONFIG_MIRROR = 'kubernetes.io/config.mirror';

/** kubetypes.IsStaticPod: a pod of a file or URL source */
export function isStaticPod(pod: any): boolean {
  const source = pod?.metadata?.annotations?.[CONFIG_SOURCE];
  return source !== undefined && source !== 'api';
}

/**
 * kubetypes.IsCriticalPod: a static or mirror pod, or one of priority 2000000000 (system-cluster-critical)
 * and more. The kubelet admits these under node pressure, never evicts them, and (not Keelson) preempts
 * other pods for them.
 */
export function isCriticalPod(pod: any): boolean {
  const p = pod?.spec?.priority;
  return isStaticPod(pod) || pod?.metadata?.annotations?.[CONFIG_MIRROR] !== undefined || (typeof p === 'number' && p >= 2_000_000_000);
}

export interface StaticPodOptions {
  path: string;
  url: string;
  urlHeaders: Record<string, string[]>;
  fileCheckFrequencyMs: number;
  httpCheckFrequencyMs: number;
  nodeName: string;
  log: Logger;
  /** the whole set of static pods, each time it changed */
  onChange(pods: any[]): void;
}

/** the kubelet's defaults of a static pod from `source` (applyDefaults) */
export function defaultStaticPod(pod: any, nodeName: string, sourceKind: 'file' | 'http', source: string): any {
  const p = structuredClone(pod);
  p.metadata ??= {};
  p.spec ??= {};
  if (!p.metadata.uid) {
    const h = createHash('md5');
    if (sourceKind === 'file') h.update(`host:${nodeName}`).update(`file:${source}`);
    else h.update(`url:${source}`);
    h.update(JSON.stringify(pod));
    p.metadata.uid = h.digest('hex');
  }
  p.metadata.name = `${p.metadata.name ?? ''}-${nodeName}`;
  p.metadata.namespace ||= 'default';
  p.spec.nodeName = nodeName;
  p.metadata.annotations = { ...(p.metadata.annotations ?? {}), [CONFIG_HASH]: p.metadata.uid, [CONFIG_SOURCE]: sourceKind, [CONFIG_SEEN]: new Date().toISOString() };
  const tolerations: any[] = p.spec.tolerations ?? [];
  if (!tolerations.some((t) => t.operator === 'Exists' && !t.key && t.effect === 'NoExecute')) tolerations.push({ operator: 'Exists', effect: 'NoExecute' });
  p.spec.tolerations = tolerations;
  p.kind = 'Pod';
  p.apiVersion = 'v1';
  return p;
}

function decodePods(text: string, what: string): any[] {
  const docs = YAML.parseAllDocuments(text).map((d) => {
    if (d.errors.length) throw new Error(`${what}: ${d.errors[0].message}`);
    return d.toJSON();
  }).filter((d) => d !== null && d !== undefined);
  const out: any[] = [];
  for (const d of docs) {
    if (d?.kind === 'PodList') out.push(...(d.items ?? []));
    else if (d?.kind === 'Pod' || (d?.metadata && d?.spec)) out.push(d);
    else throw new Error(`${what}: not a Pod (kind ${JSON.stringify(d?.kind ?? '')})`);
  }
  for (const p of out) if (!p?.metadata?.name) throw new Error(`${what}: the pod has no metadata.name`);
  return out;
}

export class StaticPodSource {
  private timers: NodeJS.Timeout[] = [];
  private filePods: any[] = [];
  private urlPods: any[] = [];
  private last = '';
  private readonly reported = new Set<string>();

  constructor(private readonly o: StaticPodOptions) {}

  async start(): Promise<void> {
    if (this.o.path) {
      this.readFiles();
      this.timers.push(setInterval(() => this.readFiles(), Math.max(1000, this.o.fileCheckFrequencyMs)));
    }
    if (this.o.url) {
      await this.readURL();
      this.timers.push(setInterval(() => void this.readURL(), Math.max(1000, this.o.httpCheckFrequencyMs)));
    }
    for (const t of this.timers) t.unref();
    this.publish(true);
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  private report(key: string, msg: string, err: string): void {
    if (this.reported.has(key + err)) return;
    this.reported.add(key + err);
    this.o.log.error(new Error(err), msg, { source: key });
  }

  private readFiles(): void {
    const path = this.o.path;
    let files: string[];
    try {
      const st = statSync(path);
      files = st.isDirectory() ? readdirSync(path).filter((n) => !n.startsWith('.')).sort().map((n) => join(path, n)) : [path];
    } catch (e) {
      this.report(path, 'Unable to read config path', (e as Error).message);
      files = [];
    }
    const pods: any[] = [];
    for (const f of files) {
      try {
        if (!statSync(f).isFile()) continue;
        for (const p of decodePods(readFileSync(f, 'utf8'), f)) pods.push(defaultStaticPod(p, this.o.nodeName, 'file', f));
      } catch (e) {
        this.report(f, 'Could not process manifest file', (e as Error).message);
      }
    }
    this.filePods = pods;
    this.publish(false);
  }

  private async readURL(): Promise<void> {
    try {
      const headers: Record<string, string> = {};
      for (const [k, vs] of Object.entries(this.o.urlHeaders)) headers[k] = vs.join(',');
      const res = await fetch(this.o.url, { headers, signal: AbortSignal.timeout(10_000) });
      if (res.status !== 200) throw new Error(`${this.o.url}: ${res.status} ${res.statusText}`);
      const text = await res.text();
      this.urlPods = text.trim() ? decodePods(text, this.o.url).map((p) => defaultStaticPod(p, this.o.nodeName, 'http', this.o.url)) : [];
    } catch (e) {
      this.report(this.o.url, 'Failed to read pods from URL', (e as Error).message);
      return; // (the pods read last stay, as the kubelet's HTTP source keeps them)
    }
    this.publish(false);
  }

  private publish(force: boolean): void {
    const pods = [...this.filePods, ...this.urlPods];
    const key = pods.map((p) => p.metadata.uid).sort().join(',');
    if (!force && key === this.last) return;
    this.last = key;
    this.o.onChange(pods);
  }
}
