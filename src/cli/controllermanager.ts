// `keelson controller-manager`: the controller manager as a daemon of its own, with
// kube-controller-manager's flags, against any Kubernetes-compatible API server (--kubeconfig,
// --master, or the in-cluster configuration). The same manager runs inside `keelson server`.
//
// It serves HTTPS on --secure-port (10257): /healthz (the check leaderElection with leader
// election on, then one check named after each running controller, as kube-controller-manager's
// mutable healthz handler has them; `ping` while there is none), /metrics and /metrics/slis, and
// with --profiling (default true) /debug/pprof/ (client/profiling.ts), behind
// authentication and authorization delegated to the API server (componentserving.ts). It exits
// when it loses its Lease, as kube-controller-manager does, so that a supervisor restarts it and
// it campaigns again with fresh caches.
//
// Flags of controllers Keelson does not have (node IPAM, volume attach/detach, autoscaling, cloud
// routes, certificate signing, ...) are accepted, as a kube-controller-manager whose such
// controllers are off accepts them, and their help says so; flags whose requested behaviour
// Keelson cannot give (leader migration, cloud providers) are refused with a message.
// --contention-profiling is accepted with a warning (Node.js has no block profiler).
import { readFileSync } from 'node:fs';
import { createPublicKey } from 'node:crypto';
import client from 'prom-client';
import { setWorkQueueMetricsProvider } from '../client/workqueue.js';
import { workQueueMetricsProvider } from '../client/workqueuemetrics.js';
import { Command, FeatureGate, type FlagSet } from './flags.js';
import * as klog from './klog.js';
import { daemonLogger } from './daemon.js';
import { getVersionInfo, userAgent } from './version.js';
import { declareControllerManagerFlags } from './controllerflags.js';
import { declareDelegatedAuthFlags, declareSecureServingFlags, defaultDelegatedAuthFlags, defaultSecureServingFlags, DelegatedAuth, exitComponentOnSignals, serveComponent, serveComponentMetrics } from './componentserving.js';
import { Health, type HealthCheck } from '../apiserver/health.js';
import { LEGACY_ISSUER, legacyClaims, newTokenSigner, privateKeyFromFile, signToken } from '../apiserver/authn/index.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { processProfiler, serveDebugFlags, serveDebugPprof } from '../client/profiling.js';
import { restConfigFromConnection, type RESTConfig } from '../client/rest.js';
import { ControllerManager } from '../controllers/manager.js';
import { defaultControllerManagerOptions, validateControllerManagerOptions, type ControllerManagerOptions } from '../controllers/options.js';

const FEATURES = { ...klog.loggingFeatureSpecs } as const;
const PAIR_NAME = 'kube-controller-manager';
const NOT_RUN = 'Keelson has no such controller: the flag is accepted and has no effect.';

/** the options of `keelson controller-manager` that are not the manager's own */
interface DaemonOptions {
  kubeconfig: string;
  master: string;
  kubeAPIContentType: string;
  cloudProvider: string;
  profiling: boolean;
  contentionProfiling: boolean;
  enableLeaderMigration: boolean;
  leaderMigrationConfig: string;
  rootCAFile: string;
  serviceAccountPrivateKeyFile: string;
  clusterSigningCertFile: string;
  clusterSigningKeyFile: string;
  perSignerFiles: Record<string, string>;
  /** --disabled-metrics: metric names left out of /metrics */
  disabledMetrics: string[];
}

function declare(cmd: Command, m: ControllerManagerOptions, d: DaemonOptions, serving: ReturnType<typeof defaultSecureServingFlags>, auth: ReturnType<typeof defaultDelegatedAuthFlags>, gate: FeatureGate): void {
  const s = cmd.sections;
  const g = s.flagSet('generic');
  g.stringVar(d, 'cloudProvider', 'cloud-provider', 'The provider for cloud services. Empty string for no provider, or "external" for a cloud-controller-manager of its own (Keelson has no in-tree providers).');
  g.string('cloud-config', '', 'The path to the cloud provider configuration file. Empty string for no configuration file. (Keelson has no in-tree cloud providers: not read.)');
  g.string('external-cloud-volume-plugin', '', `The plugin to use when cloud provider is set to external. ${NOT_RUN}`);
  g.bool('allocate-node-cidrs', false, `Should CIDRs for Pods be allocated and set on the cloud provider. ${NOT_RUN}`);
  g.string('cidr-allocator-type', 'RangeAllocator', `Type of CIDR allocator to use. ${NOT_RUN}`);
  g.string('cluster-cidr', '', `CIDR Range for Pods in cluster. Only used when --allocate-node-cidrs=true. ${NOT_RUN}`);
  g.string('cluster-name', 'kubernetes', 'The instance prefix for the cluster. (It names cloud resources; Keelson has no cloud controllers: no effect.)');
  g.bool('configure-cloud-routes', true, `Should CIDRs allocated by allocate-node-cidrs be configured on the cloud provider. ${NOT_RUN}`);
  g.boolVar(d, 'enableLeaderMigration', 'enable-leader-migration', 'Whether to enable controller leader migration. (Not supported by Keelson: only false.)');
  g.stringVar(d, 'kubeAPIContentType', 'kube-api-content-type', 'Content type of requests sent to apiserver. (Keelson\'s client sends JSON whatever this says; the API server answers in the type asked for.)');
  g.stringVar(d, 'leaderMigrationConfig', 'leader-migration-config', 'Path to the config file for controller leader migration, or empty to use the value that reflects default configuration of the controller manager. (Not supported by Keelson.)');
  g.strings('emulated-version', [], 'The versions different components emulate their capabilities (APIs, features, ...) of. (Keelson emulates its own version only: accepted, not used.)');
  const d2 = s.flagSet('debugging');
  d2.boolVar(d, 'contentionProfiling', 'contention-profiling', 'Enable block profiling, if profiling is enabled. (Node.js has no block profiler: accepted with a warning, and /debug/pprof/block stays empty.)');
  d2.boolVar(d, 'profiling', 'profiling', 'Enable profiling via web interface host:port/debug/pprof/. (Keelson\'s profiles come from V8\'s profilers, in Go\'s pprof format: profile (CPU) and heap; see the README.)');
  declareSecureServingFlags(s.flagSet('secure serving'), serving, PAIR_NAME);
  declareDelegatedAuthFlags(s.flagSet('authentication'), s.flagSet('authorization'), auth);
  const c = s.flagSet('controllers');
  declareControllerManagerFlags(g, c, m);
  c.boolVar(m, 'enableGarbageCollector', 'enable-garbage-collector', 'Enables the generic garbage collector. MUST be synced with the corresponding flag of the kube-apiserver.');
  c.stringVar(d, 'rootCAFile', 'root-ca-file', 'If set, this root certificate authority will be included in service account\'s token secret. This must be a valid PEM-encoded CA bundle. (Also what the root CA publisher puts in every namespace; without it, the CA of --kubeconfig.)');
  c.stringVar(d, 'serviceAccountPrivateKeyFile', 'service-account-private-key-file', 'Filename containing a PEM-encoded private RSA or ECDSA key used to sign service account tokens. (Without it the service account token controller does not run.)');
  c.boolVar(m, 'useServiceAccountCredentials', 'use-service-account-credentials', 'If true, use individual service account credentials for each controller.');
  // kube-controller-manager's options of controllers Keelson does not run
  const other = s.flagSet('controllers Keelson does not run');
  for (const [name, def, what] of [
    ['concurrent-horizontal-pod-autoscaler-syncs', 5, 'The number of horizontal pod autoscaler objects that are allowed to sync concurrently.'],
    ['concurrent-service-syncs', 1, 'The number of services that are allowed to sync concurrently.'],
    ['concurrent-validating-admission-policy-status-syncs', 5, 'The number of ValidatingAdmissionPolicyStatusController workers that are allowed to sync concurrently.'],
    ['mirroring-concurrent-service-endpoint-syncs', 5, 'The number of service endpoint syncing operations that will be done concurrently by the endpointslice-mirroring-controller.'],
    ['mirroring-max-endpoints-per-subset', 1000, 'The maximum number of endpoints that will be added to an EndpointSlice by the endpointslice-mirroring-controller.'],
    ['node-cidr-mask-size', 0, 'Mask size for node cidr in cluster. Default is 24 for IPv4 and 64 for IPv6.'],
    ['node-cidr-mask-size-ipv4', 0, 'Mask size for IPv4 node cidr in dual-stack cluster. Default is 24.'],
    ['node-cidr-mask-size-ipv6', 0, 'Mask size for IPv6 node cidr in dual-stack cluster. Default is 64.'],
    ['pv-recycler-increment-timeout-nfs', 30, 'the increment of time added per Gi to ActiveDeadlineSeconds for an NFS scrubber pod.'],
    ['pv-recycler-minimum-timeout-hostpath', 60, 'The minimum ActiveDeadlineSeconds to use for a HostPath Recycler pod. This is for development and testing only and will not work in a multi-node cluster.'],
    ['pv-recycler-minimum-timeout-nfs', 300, 'The minimum ActiveDeadlineSeconds to use for an NFS Recycler pod.'],
    ['pv-recycler-timeout-increment-hostpath', 30, 'the increment of time added per Gi to ActiveDeadlineSeconds for a HostPath scrubber pod. This is for development and testing only and will not work in a multi-node cluster.'],
  ] as const) other.int32(name, def, `${what} ${NOT_RUN}`);
  for (const [name, def, what] of [
    ['attach-detach-reconcile-sync-period', 60_000, 'The reconciler sync wait time between volume attach detach. This duration must be larger than one second, and increasing this value from the default may allow for volumes to be mismatched with pods.'],
    ['horizontal-pod-autoscaler-cpu-initialization-period', 300_000, 'The period after pod start when CPU samples might be skipped.'],
    ['horizontal-pod-autoscaler-downscale-stabilization', 300_000, 'The period for which autoscaler will look backwards and not scale down below any recommendation it made during that period.'],
    ['horizontal-pod-autoscaler-initial-readiness-delay', 30_000, 'The period after pod start during which readiness changes will be treated as initial readiness.'],
    ['horizontal-pod-autoscaler-sync-period', 15_000, 'The period for syncing the number of pods in horizontal pod autoscaler.'],
    ['legacy-service-account-token-clean-up-period', 8760 * 3600_000, 'The period of time since the last usage of an legacy service account token before it can be deleted.'],
    ['mirroring-endpointslice-updates-batch-period', 0, 'The length of EndpointSlice updates batching period for the endpointslice-mirroring-controller.'],
    ['route-reconciliation-period', 10_000, 'The period for reconciling routes created for Nodes by cloud provider.'],
  ] as const) other.duration(name, def, `${what} ${NOT_RUN}`);
  other.bool('disable-attach-detach-reconcile-sync', false, `Disable volume attach detach reconciler sync. ${NOT_RUN}`);
  other.bool('disable-force-detach-on-timeout', false, `Prevent force detaching volumes based on maximum unmount time and node status. ${NOT_RUN}`);
  other.string('flex-volume-plugin-dir', '/usr/libexec/kubernetes/kubelet-plugins/volume/exec/', `Full path of the directory in which the flex volume plugin should search for additional third party volume plugins. ${NOT_RUN}`);
  other.float64('horizontal-pod-autoscaler-tolerance', 0.1, `The minimum change (from 1.0) in the desired-to-actual metrics ratio for the horizontal pod autoscaler to consider scaling. ${NOT_RUN}`);
  other.string('pv-recycler-pod-template-filepath-hostpath', '', `The file path to a pod definition used as a template for HostPath persistent volume recycling. ${NOT_RUN}`);
  other.string('pv-recycler-pod-template-filepath-nfs', '', `The file path to a pod definition used as a template for NFS persistent volume recycling. ${NOT_RUN}`);
  other.string('service-cluster-ip-range', '', `CIDR Range for Services in cluster. Only used when --allocate-node-cidrs=true. ${NOT_RUN}`);
  const csr = s.flagSet('csrsigning controller');
  csr.stringVar(d, 'clusterSigningCertFile', 'cluster-signing-cert-file', 'Filename containing a PEM-encoded X509 CA certificate used to issue cluster-scoped certificates. If specified, no more specific --cluster-signing-* flag may be specified.');
  csr.stringVar(d, 'clusterSigningKeyFile', 'cluster-signing-key-file', 'Filename containing a PEM-encoded RSA or ECDSA private key used to sign cluster-scoped certificates. If specified, no more specific --cluster-signing-* flag may be specified.');
  for (const signer of ['kube-apiserver-client', 'kubelet-client', 'kubelet-serving', 'legacy-unknown']) {
    for (const part of ['cert', 'key'] as const) {
      const name = `cluster-signing-${signer}-${part}-file`;
      d.perSignerFiles[name] = '';
      csr.stringVar(d.perSignerFiles, name, name, `Filename containing a PEM-encoded ${part === 'cert' ? 'X509 CA certificate' : 'RSA or ECDSA private key'} for the kubernetes.io/${signer} signer. If specified, --cluster-signing-{cert,key}-file must not be set.`);
    }
  }
  const metrics = s.flagSet('metrics');
  metrics.stringToString('allow-metric-labels', {}, 'The map from metric-label to value allow-list of this label. The key\'s format is <MetricName>,<LabelName>. The value\'s format is <allowed_value>,<allowed_value>...e.g. metric1,label1=\'v1,v2,v3\', metric1,label2=\'v1,v2,v3\' metric2,label1=\'v1,v2,v3\'. (Keelson\'s few metrics have no label values to restrict: accepted, no effect.)');
  metrics.string('allow-metric-labels-manifest', '', 'The path to the manifest file that contains the allow-list mapping. The format of the file is the same as the flag --allow-metric-labels. Note that the flag --allow-metric-labels will override the manifest file. (Accepted, no effect, as --allow-metric-labels.)');
  metrics.stringsVar(d, 'disabledMetrics', 'disabled-metrics', 'This flag provides an escape hatch for misbehaving metrics. You must provide the fully qualified metric name in order to disable it. Disclaimer: disabling metrics is higher in precedence than showing hidden metrics.');
  metrics.string('show-hidden-metrics-for-version', '', 'The previous version for which you want to show hidden metrics. Only the previous minor version is meaningful, other values will not be allowed. The format is <major>.<minor>, e.g.: \'1.16\'. The purpose of this format is make sure you have the opportunity to notice if the next release hides additional metrics, rather than being surprised when they are permanently removed in the release after that. (Keelson hides no metrics: accepted, no effect.)');
  const k = s.flagSet('misc');
  k.stringVar(d, 'kubeconfig', 'kubeconfig', 'Path to kubeconfig file with authorization and master location information (the master location can be overridden by the master flag).');
  k.stringVar(d, 'master', 'master', 'The address of the Kubernetes API server (overrides any value in kubeconfig).');
  gate.addFlag(s.flagSet('feature gate'), { component: 'kube' });
  const logs = s.flagSet('logs');
  klog.addFlags(logs);
  const gl = s.flagSet('global');
  gl.bool('help', false, `help for ${cmd.name}`, { shorthand: 'h' });
  gl.version();
}

/** the start-up errors of the options (an aggregate, as kube-controller-manager prints them) */
function validate(m: ControllerManagerOptions, d: DaemonOptions, flags: FlagSet): string[] {
  const errs = validateControllerManagerOptions(m);
  if (d.cloudProvider && d.cloudProvider !== 'external') errs.push(`cloud provider could not be initialized: unknown cloud provider "${d.cloudProvider}" (Keelson has no in-tree cloud providers: leave --cloud-provider empty, or "external")`);
  if (d.enableLeaderMigration || d.leaderMigrationConfig) errs.push('--enable-leader-migration and --leader-migration-config are not supported by Keelson');
  if ((d.clusterSigningCertFile || d.clusterSigningKeyFile) && Object.values(d.perSignerFiles).some((v) => v !== '')) {
    errs.push('cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time');
  }
  if (flags.changed('kube-api-content-type') && !['application/json', 'application/vnd.kubernetes.protobuf'].includes(d.kubeAPIContentType)) {
    errs.push(`--kube-api-content-type: unsupported content type "${d.kubeAPIContentType}": application/json or application/vnd.kubernetes.protobuf`);
  }
  return errs;
}

/**
 * The CA of each kubernetes.io signer: --cluster-signing-cert-file/-key-file for all of them, else
 * each signer's own pair of files (a signer without one signs nothing)
 */
function loadSigningCAs(d: DaemonOptions): Record<string, { certPEM: string; keyPEM: string }> {
  const out: Record<string, { certPEM: string; keyPEM: string }> = {};
  const pair = (cert: string, key: string, what: string) => {
    if (!cert && !key) return undefined;
    if (!cert || !key) throw new Error(`${what}: both the certificate and the key file must be given`);
    return { certPEM: readFileSync(cert, 'utf8'), keyPEM: readFileSync(key, 'utf8') };
  };
  const all = pair(d.clusterSigningCertFile, d.clusterSigningKeyFile, '--cluster-signing-cert-file and --cluster-signing-key-file');
  const files: Record<string, string> = { 'kube-apiserver-client': 'kube-apiserver-client', 'kube-apiserver-client-kubelet': 'kubelet-client', 'kubelet-serving': 'kubelet-serving', 'legacy-unknown': 'legacy-unknown' };
  for (const [signer, flag] of Object.entries(files)) {
    const ca = all ?? pair(d.perSignerFiles[`cluster-signing-${flag}-cert-file`] ?? '', d.perSignerFiles[`cluster-signing-${flag}-key-file`] ?? '', `--cluster-signing-${flag}-cert-file and --cluster-signing-${flag}-key-file`);
    if (ca) out[`kubernetes.io/${signer}`] = ca;
  }
  return out;
}

export function controllerManagerCommand(): Command {
  const m = { ...defaultControllerManagerOptions() };
  const d: DaemonOptions = {
    kubeconfig: '',
    master: '',
    kubeAPIContentType: 'application/vnd.kubernetes.protobuf',
    cloudProvider: '',
    // (kube-controller-manager's defaults)
    profiling: true,
    contentionProfiling: false,
    enableLeaderMigration: false,
    leaderMigrationConfig: '',
    rootCAFile: '',
    serviceAccountPrivateKeyFile: '',
    clusterSigningCertFile: '',
    clusterSigningKeyFile: '',
    perSignerFiles: {},
    disabledMetrics: [],
  };
  const serving = defaultSecureServingFlags(10257);
  const auth = defaultDelegatedAuthFlags();
  const gate = new FeatureGate(FEATURES as any);
  const cmd: Command = new Command({
    use: 'controller-manager',
    silenceUsage: true,
    short: 'Run the controller manager (kube-controller-manager) against an API server',
    long: 'The Keelson controller manager is a daemon that embeds the core control loops: each watches the shared state of the cluster through the API server and makes changes to move the current state toward the desired state (namespaces, service accounts and their tokens, the root CA, disruption budgets, resource quotas, the garbage collector, ReplicationControllers, ReplicaSets, Deployments, DaemonSets, StatefulSets, Jobs, CronJobs and the TTL of finished Jobs, Endpoints and EndpointSlices, Service CIDRs, the binding and provisioning of PersistentVolumes, the pod garbage collector, the node lifecycle and taint-based eviction, and CertificateSigningRequests: signing, approval and cleaning; --controllers lists them by name). It takes kube-controller-manager\'s flags and runs against any Kubernetes-compatible API server. `keelson server` runs the same manager in its own process.',
    args: 'none',
    run: async ({ flags }) => {
      await run(m, d, serving, auth, gate, flags);
    },
  });
  declare(cmd, m, d, serving, auth, gate);
  return cmd;
}

async function restFor(kubeconfig: string, master: string): Promise<RESTConfig> {
  return restConfigFromConnection(await loadKubeconfig({ explicitPath: kubeconfig || undefined, kubeconfigEnv: kubeconfig ? undefined : '', server: master || undefined }));
}

async function run(m: ControllerManagerOptions, d: DaemonOptions, serving: ReturnType<typeof defaultSecureServingFlags>, authFlags: ReturnType<typeof defaultDelegatedAuthFlags>, gate: FeatureGate, flags: FlagSet): Promise<void> {
  const lerrs = klog.validateAndApply(gate);
  if (lerrs.length) throw new Error(lerrs.join('; '));
  const errs = validate(m, d, flags);
  if (errs.length) throw new Error(errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
  if (serving.securePort < 0 || serving.securePort > 65535) throw new Error(`--secure-port ${serving.securePort} must be between 0 and 65535, inclusive. 0 for turning off secure port`);
  const log = daemonLogger();
  klog.printFlags(flags, 1);
  log.info('Starting', { version: getVersionInfo().gitVersion });
  // --profiling: V8's sampling heap profiler runs from the start, as Go's heap sampling does
  if (d.profiling) await processProfiler().startHeapSampling();
  if (d.profiling && d.contentionProfiling) log.warn('--contention-profiling has no effect: Node.js has no block profiler, /debug/pprof/block and /debug/pprof/mutex stay empty');
  if (!d.kubeconfig && !d.master) log.warn('Neither --kubeconfig nor --master was specified. Using the inClusterConfig. This might not work.');
  let rest: RESTConfig;
  try {
    rest = await restFor(d.kubeconfig, d.master);
  } catch (e) {
    throw new Error(`unable to load the API server's configuration: ${(e as Error).message}`);
  }
  let legacyTokenGenerator;
  if (d.serviceAccountPrivateKeyFile) {
    const key = privateKeyFromFile(d.serviceAccountPrivateKeyFile);
    createPublicKey(key); // (a key that cannot give a public key is refused now, not at the first token)
    const signer = newTokenSigner(LEGACY_ISSUER, key);
    legacyTokenGenerator = (sa: any, secretName: string) => signToken(signer, legacyClaims(sa, secretName));
  }
  const rootCA = d.rootCAFile ? readFileSync(d.rootCAFile, 'utf8') : undefined;
  const signingCAs = loadSigningCAs(d);
  const agent = userAgent('kube-controller-manager');

  // metrics: the process's, the leader election's, and the REST client's requests
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const requests = new client.Counter({ name: 'rest_client_requests_total', help: '[ALPHA] Number of HTTP requests, partitioned by status code, method, and host.', labelNames: ['code', 'host', 'method'], registers: [registry] });
  const leader = new client.Gauge({ name: 'leader_election_master_status', help: '[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. \'name\' is the string used to identify the lease. Please make sure to group by name.', labelNames: ['name'], registers: [registry] });
  // the controllers' work queues (client-go's workqueue metrics), for every queue made from here on
  setWorkQueueMetricsProvider(workQueueMetricsProvider(registry));
  for (const name of d.disabledMetrics) registry.removeSingleMetric(name);
  const host = new URL(rest.server).host;
  rest = { ...rest, onResponse: (r) => requests.inc({ code: String(r.status), host, method: r.verb }) };

  const mgr = new ControllerManager({
    rest,
    userAgent: agent,
    options: m,
    log,
    rootCA,
    legacyTokenGenerator,
    signingCAs,
    onLostLeadership: () => process.exit(1),
  });

  // /healthz: leaderElection (with leader election on), then one check per running controller; ping while there is none
  const health = new Health([], 0);
  const checks = (): HealthCheck[] => {
    const out: HealthCheck[] = [];
    if (m.leaderElect) out.push({ name: 'leaderElection', check: () => mgr.leaderElectionHealth() });
    for (const name of mgr.startedControllers()) out.push({ name, check: () => undefined });
    return out.length ? out : [{ name: 'ping', check: () => undefined }];
  };
  const auth = await DelegatedAuth.build(authFlags, (k) => restFor(k, ''), log, agent);
  const listener = await serveComponent(
    serving,
    PAIR_NAME,
    auth,
    async (req, res, path, query) => {
      if (path === '/healthz' || path.startsWith('/healthz/')) {
        health.replaceChecks(checks());
        return health.handle(req, res, path, query);
      }
      if (path === '/metrics') leader.set({ name: m.resourceName }, mgr.isLeader() ? 1 : 0);
      if (d.profiling && (await serveDebugPprof(req, res, path, query, { bare: 'redirect' }))) return true;
      if (d.profiling && (await serveDebugFlags(req, res, path, (v) => klog.configure({ verbosity: v }), { index: true }))) return true;
      return serveComponentMetrics(res, path, registry, health);
    },
    log,
  );
  if (listener) klog.log.infof('Serving securely on %s', listener.address);
  mgr.start();
  log.info('Started the controller manager', { identity: mgr.identity, leaderElect: m.leaderElect, server: rest.server });

  // (the controllers stop and the Lease is given up first, then the secure port closes)
  exitComponentOnSignals(log, () => mgr.stop(), listener);
  await new Promise(() => {});
}
