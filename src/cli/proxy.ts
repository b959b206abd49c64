// `keelson proxy`: the service proxy (kube-proxy) in its nftables mode, with kube-proxy's flags and
// configuration file (a KubeProxyConfiguration, kubeproxy.config.k8s.io/v1alpha1), against any
// Kubernetes-compatible API server (--kubeconfig, --master, the file's clientConnection, or the
// in-cluster configuration). The work is in src/proxy/; this file reads the options.
//
// As kube-proxy with --config: the file gives the configuration, and the flags given on the
// command line override it. `--cleanup` removes the table and exits. On SIGTERM or SIGINT the
// proxy stops and leaves its rules in place, as kube-proxy does.
//
// Keelson's own flag: --nftables-table-name (default kube-proxy's `kube-proxy`), so that several
// proxies (of test clusters) on one host each keep a table of their own.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import YAML from 'yaml';
import { Command, FeatureGate, parseDuration, type FlagSet } from './flags.js';
import * as klog from './klog.js';
import { daemonLogger, exitOnSignals } from './daemon.js';
import { exitWithParent } from './agent.js';
import { getVersionInfo, userAgent } from './version.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { restConfigFromConnection } from '../client/rest.js';
import { cleanupTable, DEFAULT_TABLE, startProxy } from '../proxy/index.js';

const FEATURES = { ...klog.loggingFeatureSpecs } as const;

interface ProxyFlags {
  config: string;
  kubeconfig: string;
  master: string;
  hostnameOverride: string;
  proxyMode: string;
  clusterCIDR: string;
  masqueradeAll: boolean;
  masqueradeBit: number;
  healthzBindAddress: string;
  metricsBindAddress: string;
  configSyncPeriodMs: number;
  syncPeriodMs: number;
  minSyncPeriodMs: number;
  nodePortAddresses: string[];
  kubeAPIQPS: number;
  kubeAPIBurst: number;
  cleanup: boolean;
  tableName: string;
}

function defaults(): ProxyFlags {
  return {
    config: '',
    kubeconfig: '',
    master: '',
    hostnameOverride: '',
    proxyMode: '',
    clusterCIDR: '',
    masqueradeAll: false,
    masqueradeBit: 14,
    healthzBindAddress: '0.0.0.0:10256',
    metricsBindAddress: '127.0.0.1:10249',
    configSyncPeriodMs: 15 * 60_000,
    syncPeriodMs: 30_000,
    minSyncPeriodMs: 1_000,
    nodePortAddresses: [],
    kubeAPIQPS: 5,
    kubeAPIBurst: 10,
    cleanup: false,
    tableName: DEFAULT_TABLE,
  };
}

function declare(cmd: Command, d: ProxyFlags, gate: FeatureGate): void {
  const fs = cmd.sections.flagSet('misc');
  fs.stringVar(d, 'config', 'config', 'The path to the configuration file (a KubeProxyConfiguration, kubeproxy.config.k8s.io/v1alpha1). Flags given on the command line override it.');
  fs.stringVar(d, 'kubeconfig', 'kubeconfig', 'Path to kubeconfig file with authorization information (the master location can be overridden by the master flag).');
  fs.stringVar(d, 'master', 'master', 'The address of the Kubernetes API server (overrides any value in kubeconfig)');
  fs.stringVar(d, 'hostnameOverride', 'hostname-override', 'If non-empty, will be used as the name of the Node that kube-proxy is running on. If unset, the node name is assumed to be the same as the node\'s hostname.');
  fs.stringVar(d, 'proxyMode', 'proxy-mode', "Which proxy mode to use: Keelson has 'nftables' only (the default); 'iptables' and 'ipvs' are refused.");
  fs.stringVar(d, 'clusterCIDR', 'cluster-cidr', 'The CIDR range of the pods in the cluster. Traffic to Service cluster IPs from outside this range is masqueraded.');
  fs.boolVar(d, 'masqueradeAll', 'masquerade-all', 'SNAT all traffic sent via Service cluster IPs. This may be required with some CNI plugins.');
  fs.stringVar(d, 'healthzBindAddress', 'healthz-bind-address', "The IP address and port for the health check server to serve on, defaulting to \"0.0.0.0:10256\". Set empty to disable.");
  fs.stringVar(d, 'metricsBindAddress', 'metrics-bind-address', "The IP address and port for the metrics server to serve on, defaulting to \"127.0.0.1:10249\". Set empty to disable.");
  fs.durationVar(d, 'configSyncPeriodMs', 'config-sync-period', 'How often configuration from the apiserver is refreshed. Must be greater than 0.');
  fs.durationVar(d, 'syncPeriodMs', 'sync-period', 'An interval (e.g. \'5s\', \'1m\', \'2h22m\') indicating how frequently the rules are written again even without changes. Must be greater than 0.');
  fs.durationVar(d, 'minSyncPeriodMs', 'min-sync-period', 'The minimum period between rule resyncs (e.g. \'5s\', \'1m\', \'2h22m\'). A value of 0 means every Service or EndpointSlice change will result in an immediate resync.');
  fs.stringsVar(d, 'nodePortAddresses', 'nodeport-addresses', "A list of CIDR ranges that contain valid node IPs, or alternatively, the single string 'primary'. If set to a list of CIDRs, connections to NodePort services will only be accepted on node IPs in one of the indicated ranges. If set to 'primary', NodePort services will only be accepted on the node's primary IPv4 address (its InternalIP), the default; 'all' accepts them on every address but loopback.");
  fs.float64Var(d, 'kubeAPIQPS', 'kube-api-qps', 'QPS to use while talking with kubernetes apiserver');
  fs.int32Var(d, 'kubeAPIBurst', 'kube-api-burst', 'Burst to use while talking with kubernetes apiserver');
  fs.boolVar(d, 'cleanup', 'cleanup', 'If true cleanup the nftables table and exit.');
  fs.stringVar(d, 'tableName', 'nftables-table-name', 'Keelson: the name of the nftables table (family ip) the proxy keeps; several proxies on one host need one each.');
  gate.addFlag(cmd.sections.flagSet('feature gate'), { component: 'kube' });
  klog.addFlags(cmd.sections.flagSet('logs'));
  const gl = cmd.sections.flagSet('global');
  gl.bool('help', false, `help for ${cmd.name}`, { shorthand: 'h' });
  gl.version();
}

export function proxyCommand(): Command {
  const d = defaults();
  const gate = new FeatureGate(FEATURES as any);
  const cmd: Command = new Command({
    use: 'proxy',
    silenceUsage: true,
    short: 'Run the service proxy (kube-proxy, nftables mode) of a node',
    long: 'The Keelson service proxy runs on each node and makes Services work there: it watches Services and EndpointSlices and keeps an nftables table that sends connections to a Service\'s cluster IP (and NodePort) to one of its ready endpoints, as kube-proxy does in its nftables mode. It takes kube-proxy\'s flags and configuration file.',
    args: 'none',
    run: async ({ flags }) => {
      await run(d, gate, flags);
    },
  });
  declare(cmd, d, gate);
  return cmd;
}

/** a duration field of the file: Go's form (`30s`) */
function fileDuration(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new Error(`${field}: Invalid value: ${JSON.stringify(v)}: a duration string such as "30s"`);
  return parseDuration(v);
}

/** the file's values into the flags' struct, except where a flag was given */
export function applyConfigFile(d: ProxyFlags, doc: any, changed: (flag: string) => boolean): void {
  if (!doc || typeof doc !== 'object') throw new Error('the configuration file is empty');
  if (doc.kind !== 'KubeProxyConfiguration' || doc.apiVersion !== 'kubeproxy.config.k8s.io/v1alpha1') {
    throw new Error(`no kind "${doc.kind}" is registered for version "${doc.apiVersion}": expected kubeproxy.config.k8s.io/v1alpha1 KubeProxyConfiguration`);
  }
  const set = <K extends keyof ProxyFlags>(flag: string, k: K, v: ProxyFlags[K] | undefined) => {
    if (v !== undefined && !changed(flag)) d[k] = v;
  };
  const cc = doc.clientConnection ?? {};
  set('kubeconfig', 'kubeconfig', cc.kubeconfig || undefined);
  set('kube-api-qps', 'kubeAPIQPS', cc.qps);
  set('kube-api-burst', 'kubeAPIBurst', cc.burst);
  set('hostname-override', 'hostnameOverride', doc.hostnameOverride || undefined);
  set('proxy-mode', 'proxyMode', doc.mode || undefined);
  set('cluster-cidr', 'clusterCIDR', doc.clusterCIDR || undefined);
  set('healthz-bind-address', 'healthzBindAddress', doc.healthzBindAddress ?? undefined);
  set('metrics-bind-address', 'metricsBindAddress', doc.metricsBindAddress ?? undefined);
  set('config-sync-period', 'configSyncPeriodMs', fileDuration(doc.configSyncPeriod, 'configSyncPeriod'));
  set('nodeport-addresses', 'nodePortAddresses', Array.isArray(doc.nodePortAddresses) ? doc.nodePortAddresses.map(String) : undefined);
  const nft = doc.nftables ?? {};
  set('masquerade-all', 'masqueradeAll', typeof nft.masqueradeAll === 'boolean' ? nft.masqueradeAll : undefined);
  if (typeof nft.masqueradeBit === 'number') d.masqueradeBit = nft.masqueradeBit;
  set('sync-period', 'syncPeriodMs', fileDuration(nft.syncPeriod, 'nftables.syncPeriod'));
  set('min-sync-period', 'minSyncPeriodMs', fileDuration(nft.minSyncPeriod, 'nftables.minSyncPeriod'));
  if (doc.detectLocalMode && doc.detectLocalMode !== 'ClusterCIDR') throw new Error(`detectLocalMode: Unsupported value: "${doc.detectLocalMode}": Keelson detects local traffic by ClusterCIDR only`);
}

/** the configuration's errors, in kube-proxy's words where it has some */
export function validateFlags(d: ProxyFlags): string[] {
  const errs: string[] = [];
  const mode = d.proxyMode || 'nftables';
  if (mode === 'iptables' || mode === 'ipvs' || mode === 'kernelspace') errs.push(`proxy mode "${mode}" is not supported by Keelson: its service proxy has the nftables mode only (--proxy-mode=nftables)`);
  else if (mode !== 'nftables') errs.push(`KubeProxyConfiguration.mode: Invalid value: "${mode}": must be nftables`);
  if (d.syncPeriodMs <= 0) errs.push('KubeProxyConfiguration.nftables.syncPeriod: Invalid value: must be greater than 0');
  if (d.minSyncPeriodMs < 0) errs.push('KubeProxyConfiguration.nftables.minSyncPeriod: Invalid value: must be greater than or equal to 0');
  if (d.minSyncPeriodMs > d.syncPeriodMs) errs.push('KubeProxyConfiguration.nftables.syncPeriod: Invalid value: must be greater than or equal to nftables.minSyncPeriod');
  if (d.configSyncPeriodMs <= 0) errs.push('KubeProxyConfiguration.configSyncPeriod: Invalid value: must be greater than 0');
  if (d.masqueradeBit < 0 || d.masqueradeBit > 31) errs.push('KubeProxyConfiguration.nftables.masqueradeBit: Invalid value: must be within the range [0, 31]');
  for (const c of d.clusterCIDR ? d.clusterCIDR.split(',') : []) {
    if (c.includes(':')) continue; // (IPv6 is not proxied; the IPv4 range is used)
    if (!/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(c)) errs.push(`KubeProxyConfiguration.clusterCIDR: Invalid value: "${c}": must be a valid CIDR`);
  }
  for (const a of d.nodePortAddresses) {
    if (a === 'primary' || a === 'all') continue;
    if (!/^[0-9a-fA-F.:]+\/\d{1,3}$/.test(a)) errs.push(`KubeProxyConfiguration.nodePortAddresses: Invalid value: "${a}": must be a valid CIDR or 'primary'`);
  }
  if (!/^[A-Za-z][A-Za-z0-9_.-]*$/.test(d.tableName) || d.tableName.length > 255) errs.push(`--nftables-table-name: Invalid value: "${d.tableName}": a name of letters, digits, '-', '_' and '.', starting with a letter`);
  for (const [f, v] of [['healthz-bind-address', d.healthzBindAddress], ['metrics-bind-address', d.metricsBindAddress]] as const) {
    if (v && !/^(\[[0-9a-fA-F:.]*\]|[^:]*):\d{1,5}$/.test(v)) errs.push(`--${f}: Invalid value: "${v}": must be IP:port`);
  }
  return errs;
}

async function run(d: ProxyFlags, gate: FeatureGate, flags: FlagSet): Promise<void> {
  const lerrs = klog.validateAndApply(gate);
  if (lerrs.length) throw new Error(lerrs.join('; '));
  const log = daemonLogger();
  if (d.config) {
    let doc: unknown;
    try {
      doc = YAML.parse(readFileSync(d.config, 'utf8'));
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw new Error(err.code === 'ENOENT' ? `open ${d.config}: no such file or directory` : `failed to decode config file "${d.config}": ${err.message}`);
    }
    applyConfigFile(d, doc, (f) => flags.changed(f));
  }
  const errs = validateFlags(d);
  if (errs.length) throw new Error(errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
  klog.printFlags(flags, 1);
  if (d.cleanup) {
    await cleanupTable(d.tableName);
    log.info('Removed the nftables table', { table: d.tableName });
    process.exit(0);
  }
  log.info('Starting the service proxy', { version: getVersionInfo().gitVersion, mode: 'nftables' });
  const nodeName = (d.hostnameOverride || hostname()).trim().toLowerCase();
  if (!d.kubeconfig && !d.master) log.warn('Neither --kubeconfig nor --master was specified. Using the inClusterConfig. This might not work.');
  let rest;
  try {
    rest = restConfigFromConnection(await loadKubeconfig({ explicitPath: d.kubeconfig || undefined, kubeconfigEnv: d.kubeconfig ? undefined : '', server: d.master || undefined }));
  } catch (e) {
    throw new Error(`unable to load the API server's configuration: ${(e as Error).message}`);
  }
  const clusterCIDR = d.clusterCIDR.split(',').find((c) => c && !c.includes(':')) ?? '';
  if (!clusterCIDR && !d.masqueradeAll) log.warn('Missing --cluster-cidr: traffic to Services from outside the pod network is not masqueraded', { table: d.tableName });
  const proxy = await startProxy({
    rest: { ...rest, userAgent: userAgent('kube-proxy'), qps: d.kubeAPIQPS, burst: d.kubeAPIBurst },
    nodeName,
    table: d.tableName,
    clusterCIDR,
    masqueradeAll: d.masqueradeAll,
    masqueradeBit: d.masqueradeBit,
    syncPeriodMs: d.syncPeriodMs,
    minSyncPeriodMs: d.minSyncPeriodMs,
    configSyncPeriodMs: d.configSyncPeriodMs,
    nodePortAddresses: d.nodePortAddresses,
    healthzBindAddress: d.healthzBindAddress,
    metricsBindAddress: d.metricsBindAddress,
    log,
  });
  // (the proxy of keelson server goes with the server, even one killed without its SIGTERM)
  exitWithParent('service proxy', log);
  exitOnSignals(log, () => proxy.stop());
  await new Promise(() => {});
}
