// The service proxy's loop (kube-proxy's nftables Proxier and its BoundedFrequencyRunner): it
// watches Services and EndpointSlices (and its own Node, for the addresses of its NodePorts) and
// writes the whole nftables table again after changes:
//   - at most one sync every minSyncPeriod: the changes of a burst are written together;
//   - at least one every syncPeriod, changes or not (what a hand took away comes back);
//   - a failed sync is retried after minSyncPeriod, as a full one (the table deleted and made anew);
//   - nothing is written before both informers have listed once.
//
// Pods on a Linux bridge: a pod that reaches another pod of the same bridge through a ClusterIP has
// its packets DNATed by the host, but the answer goes from pod to pod straight over the bridge,
// where the host's IP hooks see it only if br_netfilter hands bridged IPv4 traffic to them
// (net.bridge.bridge-nf-call-iptables = 1, which also covers nftables' ip family). With it, the
// answer is un-NATed and all is well, which is what kube-proxy expects (kubeadm requires it). We do
// not turn that on ourselves: it changes the path of every bridged packet of the machine (other
// bridges, containers of other tools). Instead, each sync reads it: when it is not 1 (or the
// module is not loaded), every service connection is masqueraded, as with --masquerade-all, so the
// answer comes back to the host's address on the bridge and through conntrack. A warning says so.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { Informer } from '../client/informer.js';
import { nopLogger, type Logger } from '../client/log.js';
import { RESTClient, type RESTConfig } from '../client/rest.js';
import { ResourceClient, type KubeObject } from '../client/resources.js';
import { buildRuleset, renderCleanup, renderRuleset, DEFAULT_MASQUERADE_BIT, DEFAULT_TABLE, type Ruleset } from './nftables.js';
import { categorize, LABEL_SERVICE_NAME, proxiedService, servicePorts } from './services.js';

export const BRIDGE_NF_CALL_IPTABLES = '/proc/sys/net/bridge/bridge-nf-call-iptables';

export interface ProxierOptions {
  rest: RESTConfig;
  nodeName: string;
  /** the nftables table (default kube-proxy's, `kube-proxy`) */
  table?: string;
  clusterCIDR?: string;
  masqueradeAll?: boolean;
  masqueradeBit?: number;
  /** default 30 s */
  syncPeriodMs?: number;
  /** default 1 s */
  minSyncPeriodMs?: number;
  /** informers' resync (--config-sync-period), default 15 min */
  configSyncPeriodMs?: number;
  /** kube-proxy's --nodeport-addresses: CIDRs, `primary` (the default: the Node's InternalIP) or `all` */
  nodePortAddresses?: string[];
  log?: Logger;
  /** the nft program (default `nft`) */
  nft?: string;
  /** the bridge-nf-call-iptables file (tests) */
  bridgeNfCallFile?: string;
}

/** what a sync reports to metrics */
export interface SyncObserver {
  synced(seconds: number, full: boolean, ok: boolean): void;
  queued(): void;
  serviceChange(): void;
  endpointChange(): void;
}

/** runs `nft -f -` with the text on its stdin */
export function runNft(text: string, nft = 'nft'): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(nft, ['-f', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.on('error', (e) => reject(new Error(`running ${nft}: ${e.message}`)));
    p.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${nft} -f - failed (exit ${code}): ${err.trim()}`))));
    p.stdin.on('error', () => {});
    p.stdin.end(text);
  });
}

/** removes the proxy's table (kube-proxy's --cleanup) */
export function cleanupTable(table = DEFAULT_TABLE, nft = 'nft'): Promise<void> {
  return runNft(renderCleanup(table), nft);
}

/** whether bridged IPv4 traffic passes the host's IP hooks */
export function bridgeTrafficFiltered(file = BRIDGE_NF_CALL_IPTABLES): boolean {
  try {
    return readFileSync(file, 'utf8').trim() === '1';
  } catch {
    return false;
  }
}

function isIPv4CIDRMember(ip: string, cidr: string): boolean {
  const [base, bitsS] = cidr.split('/');
  const bits = Number(bitsS ?? 32);
  const n = (s: string) => s.split('.').reduce((a, x) => (a << 8) + Number(x), 0) >>> 0;
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return ((n(ip) & mask) >>> 0) === ((n(base!) & mask) >>> 0);
}

export class Proxier {
  readonly table: string;
  private readonly log: Logger;
  private readonly client: RESTClient;
  private readonly services: Informer<KubeObject>;
  private readonly slices: Informer<KubeObject>;
  private readonly node: Informer<KubeObject>;
  private readonly syncPeriodMs: number;
  private readonly minSyncPeriodMs: number;
  private previous?: Ruleset;
  private timer?: NodeJS.Timeout;
  private timerAt = 0;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private lastSyncStart = 0;
  private bridgeWarned?: boolean;
  /** when the oldest change not yet written was seen (0: none) */
  queuedAt = 0;
  /** when the last sync succeeded (0: never) */
  lastSynced = 0;
  syncCount = 0;
  observer?: SyncObserver;

  constructor(readonly o: ProxierOptions) {
    this.table = o.table || DEFAULT_TABLE;
    this.log = o.log ?? nopLogger;
    this.syncPeriodMs = o.syncPeriodMs ?? 30_000;
    this.minSyncPeriodMs = o.minSyncPeriodMs ?? 1_000;
    this.client = new RESTClient(o.rest);
    const resync = o.configSyncPeriodMs ?? 15 * 60_000;
    this.services = new Informer(new ResourceClient(this.client, { group: '', version: 'v1', resource: 'services' }), { log: this.log, resyncPeriodMs: resync, trimManagedFields: true });
    this.slices = new Informer(new ResourceClient(this.client, { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' }), { log: this.log, resyncPeriodMs: resync, trimManagedFields: true });
    const onChange = (count: () => void) => ({
      add: () => this.changed(count),
      update: (a: KubeObject, b: KubeObject) => {
        if (a !== b) this.changed(count);
      },
      delete: () => this.changed(count),
    });
    this.services.addEventHandler(onChange(() => this.observer?.serviceChange()));
    this.slices.addEventHandler(onChange(() => this.observer?.endpointChange()));
    // (its own Node: the primary address, for NodePorts and loadBalancerSourceRanges)
    this.node = new Informer(new ResourceClient(this.client, { group: '', version: 'v1', resource: 'nodes' }), { log: this.log, fieldSelector: `metadata.name=${o.nodeName}`, trimManagedFields: true });
    this.node.addEventHandler(onChange(() => {}));
  }

  private nodePortMode(): 'primary' | 'all' | 'cidrs' {
    const a = this.o.nodePortAddresses ?? [];
    if (a.length === 0 || (a.length === 1 && a[0] === 'primary')) return 'primary';
    if (a.includes('all') || a.includes('0.0.0.0/0')) return 'all';
    return 'cidrs';
  }

  /** the Node's IPv4 InternalIP (else ExternalIP), if known */
  private nodeIP(): string | undefined {
    const addrs: any[] = (this.node.list()[0] as any)?.status?.addresses ?? [];
    return addrs.find((a) => a.type === 'InternalIP' && !String(a.address).includes(':'))?.address ?? addrs.find((a) => a.type === 'ExternalIP' && !String(a.address).includes(':'))?.address;
  }

  /** the addresses NodePorts answer on now */
  private nodePortAddresses(): 'all' | string[] {
    const mode = this.nodePortMode();
    if (mode === 'all') return 'all';
    const out = new Set<string>();
    const wanted = this.o.nodePortAddresses ?? [];
    if (mode === 'primary' || wanted.includes('primary')) {
      const ip = this.nodeIP();
      if (ip) out.add(ip);
    }
    const cidrs = wanted.filter((c) => c.includes('/') && !c.includes(':'));
    if (cidrs.length) {
      for (const list of Object.values(networkInterfaces())) {
        for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal && cidrs.some((c) => isIPv4CIDRMember(a.address, c))) out.add(a.address);
      }
    }
    // (loopback addresses never take NodePorts in nftables mode, as in kube-proxy's)
    return [...out].filter((ip) => !ip.startsWith('127.'));
  }

  start(): void {
    this.queuedAt = Date.now();
    this.observer?.queued();
    this.services.run();
    this.slices.run();
    this.node.run();
    void Promise.all([this.services.waitForSync(), this.slices.waitForSync()]).then(([a, b]) => {
      if (a && b && !this.stopped) {
        this.log.info('Caches are synced', { table: this.table });
        this.schedule(0);
      }
    });
  }

  private changed(count: () => void): void {
    count();
    if (!this.queuedAt) {
      this.queuedAt = Date.now();
      this.observer?.queued();
    }
    if (this.services.hasSynced() && this.slices.hasSynced()) this.schedule(Math.max(0, this.lastSyncStart + this.minSyncPeriodMs - Date.now()));
  }

  /** a sync in `delayMs`, unless one is due sooner */
  private schedule(delayMs: number): void {
    if (this.stopped) return;
    const at = Date.now() + delayMs;
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.runSync();
    }, delayMs);
  }

  private async runSync(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.syncOnce();
    await this.running;
    this.running = undefined;
    if (this.again) {
      this.again = false;
      this.schedule(Math.max(0, this.lastSyncStart + this.minSyncPeriodMs - Date.now()));
    }
  }

  /** the table's ruleset for the informers' current state */
  ruleset(): Ruleset {
    const bySvc = new Map<string, any[]>();
    for (const s of this.slices.list() as any[]) {
      const svc = s.metadata?.labels?.[LABEL_SERVICE_NAME];
      if (!svc) continue;
      const k = `${s.metadata.namespace}/${svc}`;
      let l = bySvc.get(k);
      if (!l) bySvc.set(k, (l = []));
      l.push(s);
    }
    const bridged = bridgeTrafficFiltered(this.o.bridgeNfCallFile);
    if (this.bridgeWarned !== !bridged) {
      this.bridgeWarned = !bridged;
      if (!bridged) this.log.warn(`${this.o.bridgeNfCallFile ?? BRIDGE_NF_CALL_IPTABLES} is not 1: bridged traffic skips the host's nftables hooks, so every service connection is masqueraded (as with --masquerade-all) for pods of one bridge to reach each other through Services`);
    }
    const ports = servicePorts(this.services.list().filter(proxiedService), bySvc);
    this.lastPorts = ports;
    return buildRuleset(ports, {
      table: this.table,
      nodeName: this.o.nodeName,
      clusterCIDR: this.o.clusterCIDR ?? '',
      masqueradeAll: (this.o.masqueradeAll ?? false) || !bridged,
      masqueradeBit: this.o.masqueradeBit ?? DEFAULT_MASQUERADE_BIT,
      nodePortAddresses: this.nodePortAddresses(),
      nodeIP: this.nodeIP(),
    });
  }
  private lastPorts: ReturnType<typeof servicePorts> = [];

  /** services with a Local policy and no local endpoint, by traffic policy (kube-proxy's sync_proxy_rules_no_local_endpoints_total) */
  noLocalEndpoints(): { internal: number; external: number } {
    let internal = 0;
    let external = 0;
    const seen = new Set<string>();
    for (const sp of this.lastPorts) {
      const k = `${sp.namespace}/${sp.name}`;
      if (seen.has(k)) continue;
      const c = categorize(sp, this.o.nodeName);
      if (sp.internalLocal && c.any && c.local.length === 0) internal++;
      if (sp.externalLocal && c.any && c.local.length === 0) external++;
      seen.add(k);
    }
    return { internal, external };
  }

  private async syncOnce(): Promise<void> {
    const start = Date.now();
    this.lastSyncStart = start;
    const queued = this.queuedAt;
    const full = this.previous === undefined;
    let ok = false;
    try {
      const rs = this.ruleset();
      await runNft(renderRuleset(rs, this.previous), this.o.nft);
      this.previous = rs;
      ok = true;
      this.syncCount++;
      this.lastSynced = Date.now();
      // (changes seen while writing stay queued)
      if (this.queuedAt === queued) this.queuedAt = 0;
      this.log.v(2).info('Synced nftables rules', { table: this.table, chains: rs.chains.size, full, elapsed: `${Date.now() - start}ms` });
    } catch (e) {
      this.previous = undefined;
      this.log.error(e, 'Failed to sync the nftables table', { table: this.table });
    }
    this.observer?.synced((Date.now() - start) / 1000, full, ok);
    if (this.stopped) return;
    if (ok) this.schedule(this.syncPeriodMs);
    else this.schedule(this.minSyncPeriodMs);
  }

  /** healthy unless a change has waited longer than twice the sync period */
  healthy(now = Date.now()): boolean {
    return !this.queuedAt || now - this.queuedAt < 2 * this.syncPeriodMs;
  }

  /** stops watching and syncing; the table stays as it is */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([this.services.stop(), this.slices.stop(), this.node.stop()]);
    await this.running;
    this.client.close();
  }
}
