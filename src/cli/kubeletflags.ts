// `keelson kubelet`'s flags: kubelet 1.33's command line, declared once, bound to a
// KubeletConfiguration (the flags that are configuration fields, deprecated in favour of --config
// as the kubelet marks them) and to KubeletFlags (the command-line-only ones).
//
// The kubelet prints one "Flags:" block sorted by name, deprecated flags included (it unhides
// them), so every flag goes into the command's plain flag set. Deprecated config flags keep
// working; setting one prints pflag's "Flag --x has been deprecated, ..." notice.
//
// The kubelet gives the command line precedence over --config and --config-dir by parsing it a
// second time into the loaded configuration (kubeletConfigFlagPrecedence): applyKubeletFlagsOver
// does that with these same declarations, and resolveKubeletCommandLine runs the whole flow.
//
// Options whose behaviour Keelson's node agent does not have are accepted with their defaults;
// their help says what Keelson does with another value, and validateKeelsonSupport (options.ts)
// refuses the values it cannot honour.
import { ColonSeparatedMultimapValue, Command, FlagSet, QuantityValue, slotOf, type FeatureGate, type Value } from './flags.js';
import * as klog from './klog.js';
import { goQuote } from '../machinery/gostrings.js';
import {
  defaultKubeletFlags, formatReservedMemory, KUBELET_LABELS, KUBELET_LABEL_NAMESPACES, parseReservedMemory, parseTaints, parseVerbosity,
  parseVModule, resolveKubeletConfiguration, type KubeletConfiguration, type KubeletFlags, type LoggingConfiguration,
  type MemoryReservation, type ResolvedKubelet, type Taint,
} from '../nodeagent/options.js';
import { isIP } from 'node:net';

/** the kubelet's deprecation notice of the flags that are configuration fields */
export const CONFIG_FLAG_DEPRECATED =
  "This parameter should be set via the config file specified by the Kubelet's --config flag. See https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/ for more information.";
const GC_DEPRECATED = 'Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.';

/** the command's long description (the kubelet's, in Keelson's words) */
export const KUBELET_LONG_HELP = `The kubelet is the primary "node agent" that runs on each node. It registers the node with
the API server under the host's name, a name given by a flag, or one a cloud provider supplies.

The kubelet works from PodSpecs: YAML or JSON objects that describe a pod. It takes PodSpecs
from several sources (mainly the API server) and keeps the containers they describe running and
healthy. Containers it did not create are not its business.

Besides the API server, PodSpecs can come from two places:

File: a path given on the command line. The files under it are checked periodically for
changes, every 20 seconds by default (a flag changes the period).

HTTP endpoint: a URL given on the command line. It is fetched every 20 seconds (a flag changes
the period too).`;

const NO_EVICTION = "(Keelson's node agent observes memory.available, the nodefs, imagefs and containerfs signals of --root-dir's file system, and pid.available every 10 s; allocatableMemory.available is accepted and not observed. Hard thresholds on memory.available and nodefs.available are also subtracted from the node's allocatable.)";
const NO_EFFECT = '(Accepted; no effect in Keelson.)';

// ── values of the kubelet's own flag types ──────────────────────────────────

/** utilflag.IPVar: an IP address kept as text; an empty value leaves the field as it is */
class IPStringValue<K extends string> implements Value {
  constructor(private readonly o: Record<K, string>, private readonly k: K) {}
  set(s: string): void {
    if (s === '') return;
    if (!isIP(s)) throw new Error(`${goQuote(s)} is not a valid IP address`);
    this.o[this.k] = s;
  }
  get(): string { return this.o[this.k]; }
  toString(): string { return this.get(); }
  type(): string { return 'string'; }
}

/** cliflag.ConfigurationMap (--node-labels): `k=v,k2=v2`, a key alone means an empty value; repeated flags add */
class ConfigurationMapValue implements Value {
  constructor(private readonly m: Record<string, string>) {}
  set(value: string): void {
    for (const s of value.split(',')) {
      if (s.length === 0) continue;
      const eq = s.indexOf('=');
      if (eq >= 0) this.m[s.slice(0, eq).trim()] = s.slice(eq + 1).trim();
      else this.m[s.trim()] = '';
    }
  }
  get(): Record<string, string> { return this.m; }
  toString(): string { return Object.keys(this.m).sort().map((k) => `${k}=${this.m[k]}`).join(','); }
  type(): string { return 'mapStringString'; }
}

/** utilflag.RegisterWithTaintsVar (--register-with-taints): each use replaces the list */
class TaintsValue implements Value {
  constructor(private readonly c: { registerWithTaints: Taint[] }) {}
  set(s: string): void { this.c.registerWithTaints = parseTaints(s); }
  get(): Taint[] { return this.c.registerWithTaints; }
  toString(): string { return this.c.registerWithTaints.map((t) => `${t.key}=${t.value ?? ''}:${t.effect}`).join(','); }
  type(): string { return '[]v1.Taint'; }
}

/** utilflag.ReservedMemoryVar (--reserved-memory): the first use replaces the file's list, the next ones add */
class ReservedMemoryValue implements Value {
  private initialized = false;
  constructor(private readonly c: { reservedMemory: MemoryReservation[] }) {}
  set(s: string): void {
    if (s === '') return;
    const parsed = parseReservedMemory(s);
    if (!this.initialized) {
      this.c.reservedMemory = [];
      this.initialized = true;
    }
    this.c.reservedMemory = [...this.c.reservedMemory, ...parsed];
  }
  get(): MemoryReservation[] { return this.c.reservedMemory; }
  toString(): string { return formatReservedMemory(this.c.reservedMemory); }
  type(): string { return 'reserved-memory'; }
}

/** logsapi's VerbosityLevelPflag (-v), bound to the configuration's logging.verbosity */
class VerbosityValue implements Value {
  constructor(private readonly l: LoggingConfiguration) {}
  set(s: string): void { this.l.verbosity = parseVerbosity(s); }
  get(): number { return this.l.verbosity; }
  toString(): string { return String(this.l.verbosity); }
  type(): string { return 'Level'; }
}

/** logsapi's VModuleConfigurationPflag (--vmodule): patterns add to the configuration's */
class VModuleValue implements Value {
  constructor(private readonly l: LoggingConfiguration) {}
  set(s: string): void { this.l.vmodule = [...this.l.vmodule, ...parseVModule(s)]; }
  toString(): string { return this.l.vmodule.map((v) => `${v.filePattern}=${v.verbosity}`).join(','); }
  type(): string { return 'pattern=N,...'; }
}

// ── the declarations ────────────────────────────────────────────────────────

/**
 * Declares every kubelet 1.33 flag on `cmd` (its plain "Flags:" set), bound to `cfg` (the
 * configuration fields) and `f` (the command-line-only flags); --feature-gates lists `gate`'s
 * gates and is bound to cfg.featureGates, as the kubelet binds it. Also -h/--help and --version.
 */
export function declareKubeletFlags(cmd: Command, cfg: KubeletConfiguration, f: KubeletFlags, gate: FeatureGate): void {
  const fs = cmd.localFlags;
  const D = { deprecated: CONFIG_FLAG_DEPRECATED, hidden: false };

  // ── KubeletFlags (not deprecated unless said) ──
  fs.stringVar(f, 'kubeletConfigFile', 'config', "The file the kubelet reads its initial configuration from. The path may be absolute or relative to the kubelet's working directory. Without this flag the built-in defaults apply. Flags given on the command line win over the file.");
  fs.stringVar(f, 'kubeletDropinConfigDirectory', 'config-dir', "A directory of drop-in configuration files (*.conf, read in lexical order) whose settings override the defaults and the --config file. [default='']");
  fs.stringVar(f, 'kubeconfig', 'kubeconfig', 'The kubeconfig file that says how to reach the API server. With it the kubelet runs in API server mode; without it, in standalone mode.');
  fs.stringVar(f, 'bootstrapKubeconfig', 'bootstrap-kubeconfig', 'A kubeconfig file used to obtain a client certificate for the kubelet when the file named by --kubeconfig does not exist: the bootstrap credentials request a certificate from the API server, and once it is issued a kubeconfig referring to the new client certificate and key is written to the --kubeconfig path. The certificate and key go into the --cert-dir directory.');
  fs.stringVar(f, 'hostnameOverride', 'hostname-override', 'When not empty, this string identifies the node instead of the host name.');
  fs.stringVar(f, 'nodeIP', 'node-ip', "The node's IP address, or a comma-separated dual-stack pair. When unset, the kubelet takes the node's default IPv4 address, or its default IPv6 address when it has no IPv4 one; '::' makes it prefer the default IPv6 address. With an external cloud provider, this address helps bootstrap the node.");
  fs.stringVar(f, 'certDirectory', 'cert-dir', 'The directory holding the TLS certificates. Ignored when --tls-cert-file and --tls-private-key-file are given.');
  fs.stringVar(f, 'cloudProvider', 'cloud-provider', "The cloud services provider: empty for none, 'external' for a provider running outside the kubelet. (Keelson has no built-in providers; any other value is refused as the kubelet refuses it.)");
  fs.stringVar(f, 'rootDirectory', 'root-dir', "The directory for the kubelet's files (volume mounts and the like).");
  fs.boolVar(f, 'seccompDefault', 'seccomp-default', 'Use `RuntimeDefault` as the seccomp profile of every workload that names none.');
  fs.var(new ConfigurationMapValue(f.nodeLabels), 'node-labels',
    `Labels to put on the node when it registers with the cluster, as key=value pairs separated by ','. A label in the 'kubernetes.io' namespace must start with an allowed prefix (${KUBELET_LABEL_NAMESPACES.join(', ')}) or be one of the allowed labels (${KUBELET_LABELS.join(', ')})`);
  fs.stringVar(f, 'lockFilePath', 'lock-file', "<Warning: Alpha feature> The file the kubelet takes as its lock file. (Not supported by Keelson: refused.)");
  fs.boolVar(f, 'exitOnLockContention', 'exit-on-lock-contention', 'Whether the kubelet exits when another process contends for its lock file.');
  fs.stringVar(f, 'runtimeCgroups', 'runtime-cgroups', 'Optional absolute name of the cgroups to create and run the container runtime in. (As in the kubelet since dockershim: neither made nor joined, only read: the "runtime" system container of /stats/summary.)');
  fs.stringVar(f, 'podSandboxImage', 'pod-infra-container-image', "This image is kept from the image garbage collector. CRI runtimes have their own setting for it.", { deprecated: 'will be removed in 1.35. Image garbage collector will get sandbox image information from CRI.', hidden: false });
  fs.stringVar(f, 'imageCredentialProviderConfigPath', 'image-credential-provider-config', 'A credential provider plugin config file (JSON, YAML or YML), or a directory of such files merged in lexicographical order (not recursively).');
  fs.stringVar(f, 'imageCredentialProviderBinDir', 'image-credential-provider-bin-dir', 'The directory holding the credential provider plugin binaries.');
  fs.durationVar(f, 'minimumGCAge', 'minimum-container-ttl-duration', "How old a finished container must be before it is garbage collected, e.g. '300ms', '10s' or '2h45m'.", { deprecated: GC_DEPRECATED, hidden: false });
  fs.int32Var(f, 'maxPerPodContainerCount', 'maximum-dead-containers-per-container', 'How many old instances of each container to keep. Each one takes disk space.', { deprecated: GC_DEPRECATED, hidden: false });
  fs.int32Var(f, 'maxContainerCount', 'maximum-dead-containers', 'How many old container instances to keep in all. Each one takes disk space. A negative number means no limit.', { deprecated: GC_DEPRECATED, hidden: false });
  fs.stringVar(f, 'experimentalMounterPath', 'experimental-mounter-path', `[Experimental] The mounter binary to use; empty for the default mount. ${NO_EFFECT}`, { deprecated: 'will be removed in 1.25 or later. in favor of using CSI.', hidden: false });
  fs.boolVar(f, 'experimentalNodeAllocatableIgnoreEvictionThreshold', 'experimental-allocatable-ignore-eviction', "When 'true', hard eviction thresholds are left out of the node's allocatable. See https://kubernetes.io/docs/tasks/administer-cluster/reserve-compute-resources/ for details. [default=false]", { deprecated: 'will be removed in 1.25 or later.', hidden: false });

  // ── KubeletConfiguration (deprecated in favour of --config) ──
  fs.boolVar(cfg, 'enableServer', 'enable-server', "Run the kubelet's server.", D);
  fs.boolVar(cfg, 'failSwapOn', 'fail-swap-on', 'Refuse to start when swap is on for the node. ', D);
  fs.stringVar(cfg, 'staticPodPath', 'pod-manifest-path', 'A directory of static pod files to run, or a single static pod file. Files whose names start with a dot are skipped.', D);
  fs.durationVar(cfg, 'syncFrequency', 'sync-frequency', 'The longest time between two syncs of the running containers and the configuration', D);
  fs.durationVar(cfg, 'fileCheckFrequency', 'file-check-frequency', 'How often the static pod files are checked for changes', D);
  fs.durationVar(cfg, 'httpCheckFrequency', 'http-check-frequency', 'How often the static pod URL is checked for changes', D);
  fs.stringVar(cfg, 'staticPodURL', 'manifest-url', 'A URL serving more Pod specifications to run', D);
  fs.var(new ColonSeparatedMultimapValue(slotOf(cfg, 'staticPodURLHeader')), 'manifest-url-header', "HTTP headers, as a comma-separated list of name:value, sent with the requests to the --manifest-url URL. Several headers of one name are sent in the order given. The flag may be repeated, e.g. --manifest-url-header 'a:hello,b:again,c:world' --manifest-url-header 'b:beautiful'", D);
  fs.var(new IPStringValue(cfg, 'address'), 'address', "The IP address the kubelet serves on ('0.0.0.0' or '::' for every interface and address family)", D);
  fs.int32Var(cfg, 'port', 'port', 'The port the kubelet serves on.', D);
  fs.int32Var(cfg, 'readOnlyPort', 'read-only-port', 'A port the kubelet serves read-only on, without authentication or authorization (0 turns it off)', D);
  fs.stringVar(cfg, 'containerRuntimeEndpoint', 'container-runtime-endpoint', "The container runtime service's endpoint. Linux takes Unix domain sockets, Windows npipe and tcp endpoints, e.g. 'unix:///path/to/runtime.sock', 'npipe:////./pipe/runtime'", D);
  fs.stringVar(cfg, 'imageServiceEndpoint', 'image-service-endpoint', "The container image service's endpoint; when unset, the --container-runtime-endpoint one. Linux takes Unix domain sockets, Windows npipe and tcp endpoints, e.g. 'unix:///path/to/runtime.sock', 'npipe:////./pipe/runtime'", D);

  // authentication and authorization
  fs.boolVar(cfg.authentication.anonymous, 'enabled', 'anonymous-auth', 'Let anonymous requests reach the kubelet server: a request no other authentication method rejects is anonymous, with user name system:anonymous and group system:unauthenticated.', D);
  fs.boolVar(cfg.authentication.webhook, 'enabled', 'authentication-token-webhook', 'Authenticate bearer tokens through the TokenReview API.', D);
  fs.durationVar(cfg.authentication.webhook, 'cacheTTL', 'authentication-token-webhook-cache-ttl', "How long the token webhook's answers are cached.", D);
  fs.stringVar(cfg.authentication.x509, 'clientCAFile', 'client-ca-file', 'When set, a request presenting a client certificate signed by one of the authorities in this file is authenticated as the certificate\'s CommonName.', D);
  fs.stringVar(cfg.authorization, 'mode', 'authorization-mode', "How the kubelet server authorizes requests: AlwaysAllow or Webhook (Webhook asks the SubjectAccessReview API).", D);
  fs.durationVar(cfg.authorization.webhook, 'cacheAuthorizedTTL', 'authorization-webhook-cache-authorized-ttl', "How long the authorization webhook's 'authorized' answers are cached.", D);
  fs.durationVar(cfg.authorization.webhook, 'cacheUnauthorizedTTL', 'authorization-webhook-cache-unauthorized-ttl', "How long the authorization webhook's 'unauthorized' answers are cached.", D);

  // serving TLS
  fs.stringVar(cfg, 'tlsCertFile', 'tls-cert-file', 'The x509 certificate the kubelet serves HTTPS with (intermediate certificates, if any, after it). Without --tls-cert-file and --tls-private-key-file, a self-signed certificate and key for the public address are generated and saved in the --cert-dir directory.', D);
  fs.stringVar(cfg, 'tlsPrivateKeyFile', 'tls-private-key-file', "The x509 private key of --tls-cert-file's certificate.", D);
  fs.boolVar(cfg, 'serverTLSBootstrap', 'rotate-server-certificates', "Request serving certificates from the kube-apiserver, and new ones as they near expiry. Needs the RotateKubeletServerCertificate feature gate, and someone to approve the CertificateSigningRequests.", D);
  fs.stringsVar(cfg, 'tlsCipherSuites', 'tls-cipher-suites', `The server's cipher suites, comma-separated. When omitted, the runtime's default suites are used. \nPreferred values: ${PREFERRED_CIPHERS.join(', ')}. \nInsecure values: ${INSECURE_CIPHERS.join(', ')}.`, D);
  fs.stringVar(cfg, 'tlsMinVersion', 'tls-min-version', 'The lowest TLS version accepted. Possible values: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13', D);
  fs.boolVar(cfg, 'rotateCertificates', 'rotate-certificates', 'Request new kubelet client certificates from the kube-apiserver as the current one nears expiry.', D);

  // clients and rates
  fs.int32Var(cfg, 'registryPullQPS', 'registry-qps', 'When > 0, the most image pulls per second.  0 means no limit.', D);
  fs.int32Var(cfg, 'registryBurst', 'registry-burst', 'How many pulls may burst above --registry-qps for a moment. Only used with --registry-qps > 0', D);
  fs.int32Var(cfg, 'eventRecordQPS', 'event-qps', 'The most events created per second. Must be >= 0; 0 means the default of 5.', D);
  fs.int32Var(cfg, 'eventBurst', 'event-burst', 'How many event records may burst above --event-qps for a moment. Must be >= 0; 0 means the default of 10.', D);
  fs.stringVar(cfg, 'contentType', 'kube-api-content-type', 'The content type of the requests sent to the API server. (Keelson: application/json or application/vnd.kubernetes.protobuf.)', D);
  fs.int32Var(cfg, 'kubeAPIQPS', 'kube-api-qps', 'Queries per second toward the API server. Must be >= 0; 0 means the default of 50. Events and node heartbeats have limits of their own', D);
  fs.int32Var(cfg, 'kubeAPIBurst', 'kube-api-burst', 'Burst toward the API server. Must be >= 0; 0 means the default of 100. Events and node heartbeats have limits of their own', D);

  // debugging
  fs.boolVar(cfg, 'enableDebuggingHandlers', 'enable-debugging-handlers', 'Serve the endpoints that collect logs and run containers and commands', D);
  fs.boolVar(cfg, 'enableContentionProfiling', 'contention-profiling', `Turn on block profiling when profiling is on ${NO_EFFECT}`, D);

  // health
  fs.int32Var(cfg, 'healthzPort', 'healthz-port', 'The port of the local healthz endpoint (0 turns it off)', D);
  fs.var(new IPStringValue(cfg, 'healthzBindAddress'), 'healthz-bind-address', "The IP address the healthz server serves on ('0.0.0.0' or '::' for every interface and address family)", D);
  fs.int32Var(cfg, 'oomScoreAdj', 'oom-score-adj', "The kubelet process's oom-score-adj, in [-1000, 1000]", D);

  // DNS and networking
  fs.stringVar(cfg, 'clusterDomain', 'cluster-domain', "The cluster's domain. When set, containers search it besides the host's search domains", D);
  fs.stringsVar(cfg, 'clusterDNS', 'cluster-dns', 'DNS server IP addresses, comma-separated, for the containers of Pods with "dnsPolicy=ClusterFirst". Every server listed MUST serve the same records, or name resolution in the cluster may fail; which server is asked is not defined.', D);
  fs.stringVar(cfg, 'resolvConf', 'resolv-conf', "The resolver configuration file containers' DNS configuration is built from.", D);
  fs.stringVar(cfg, 'hairpinMode', 'hairpin-mode', `How the kubelet sets up hairpin NAT, which lets a Service's endpoints reach themselves through the Service. One of "promiscuous-bridge", "hairpin-veth" and "none". ${NO_EFFECT}`, D);
  fs.stringVar(cfg, 'podCIDR', 'pod-cidr', "The CIDR of the pods' IP addresses, in standalone mode only; in cluster mode the control plane assigns it. For IPv6 at most 65536 addresses are allocated", D);
  fs.boolVar(cfg, 'makeIPTablesUtilChains', 'make-iptables-util-chains', `Make sure the iptables utility rules exist on the host. ${NO_EFFECT}`, D);

  // connections and node status
  fs.durationVar(cfg, 'streamingConnectionIdleTimeout', 'streaming-connection-idle-timeout', "How long a streaming connection may stay idle before it is closed; 0 means never. E.g. '5m'. Every connection to the kubelet server lasts at most 4 hours.", D);
  fs.durationVar(cfg, 'nodeStatusUpdateFrequency', 'node-status-update-frequency', "How often the kubelet posts the node's status. Change it with care: it must fit the node controller's nodeMonitorGracePeriod.", D);
  fs.int32Var(cfg, 'nodeStatusMaxImages', 'node-status-max-images', 'The most images listed in Node.Status.Images; -1 means no limit.', D);
  fs.boolVar(cfg, 'registerNode', 'register-node', 'Register the node with the API server. Without --kubeconfig there is no API server to register with, and this flag does nothing.', D);
  fs.var(new TaintsValue(cfg), 'register-with-taints', 'Taints to register the node with (comma separated "<key>=<value>:<effect>"). Does nothing when register-node is false.', D);
  fs.stringVar(cfg, 'providerID', 'provider-id', "The node's unique identifier in a machine database, such as a cloud provider's");

  // images and garbage collection
  fs.durationVar(cfg, 'imageMinimumGCAge', 'minimum-image-ttl-duration', "How long an unused image is kept before it may be garbage collected, e.g. '300ms', '10s' or '2h45m'.", D);
  fs.int32Var(cfg, 'imageGCHighThresholdPercent', 'image-gc-high-threshold', 'Above this percentage of disk usage, image garbage collection always runs. Within [0, 100]; 100 turns image garbage collection off. ', D);
  fs.int32Var(cfg, 'imageGCLowThresholdPercent', 'image-gc-low-threshold', 'Below this percentage of disk usage, image garbage collection never runs; collection frees space down to it. Within [0, 100], and lower than --image-gc-high-threshold.', D);
  fs.boolVar(cfg, 'serializeImagePulls', 'serialize-image-pulls', 'Pull one image at a time. Keep the default on nodes running a docker daemon older than 1.9 or an Aufs storage backend (see issue #10959).', D);
  fs.durationVar(cfg, 'volumeStatsAggPeriod', 'volume-stats-agg-period', "How often the kubelet computes and caches the disk usage of every pod's volumes. A negative value turns the computation off.", D);
  fs.stringVar(cfg, 'volumePluginDir', 'volume-plugin-dir', `The directory searched for third-party volume plugins ${NO_EFFECT}`, D);

  // feature gates
  fs.mapStringBoolVar(cfg, 'featureGates', 'feature-gates', 'key=value pairs turning alpha and experimental features on or off. Options are:\n' + gate.knownFeatures().join('\n'), D);

  // cgroups and resources
  fs.stringVar(cfg, 'kubeletCgroups', 'kubelet-cgroups', 'Optional absolute name of the cgroups to create and run the kubelet in (made when missing, the kubelet moved into it at start and kept there every minute).', D);
  fs.stringVar(cfg, 'systemCgroups', 'system-cgroups', "Optional absolute name of the cgroups for every non-kernel process not yet in a cgroup under '/'. Empty for none. Undoing it takes a reboot. (Made when missing, the root cgroup's processes moved into it at start and every minute; needs --cgroup-root; '/' is refused. The \"misc\" system container of /stats/summary.)", D);
  fs.boolVar(cfg, 'cgroupsPerQOS', 'cgroups-per-qos', "Create the QoS cgroup hierarchy: top-level QoS cgroups (<cgroup-root>/kubepods, kubepods/burstable, kubepods/besteffort) and one cgroup per pod (pod<uid>, the pod's cgroup parent for the container runtime) with the pod's CPU shares, CFS quota, memory limit and --pod-max-pids. With false, no cgroups are made and the runtime places the containers. cgroup v1 and v2.", D);
  fs.stringVar(cfg, 'cgroupDriver', 'cgroup-driver', "How the kubelet manipulates cgroups on the host: 'cgroupfs' or 'systemd'. (Keelson: 'cgroupfs'; 'systemd' is refused at start when the pods' cgroups are made, the container runtime must use cgroupfs too: containerd's SystemdCgroup = false.)", D);
  fs.stringVar(cfg, 'cgroupRoot', 'cgroup-root', "Optional root cgroup for pods, under which the QoS hierarchy is made. It must exist. Default: '', which is '/' with --cgroups-per-qos.", D);
  fs.stringVar(cfg, 'cpuManagerPolicy', 'cpu-manager-policy', "The CPU Manager policy: 'none' or 'static'. (Keelson: 'none' only.)", D);
  fs.mapStringStringVar(cfg, 'cpuManagerPolicyOptions', 'cpu-manager-policy-options', "key=value options fine-tuning the CPU Manager policy; when absent, the default behaviour. (The 'none' policy takes none.)", { ...D, noSplit: true });
  fs.durationVar(cfg, 'cpuManagerReconcilePeriod', 'cpu-manager-reconcile-period', `<Warning: Alpha feature> How often the CPU Manager reconciles, e.g. '10s' or '1m'. When unset, 'NodeStatusUpdateFrequency' ${NO_EFFECT}`, D);
  fs.mapStringStringVar(cfg, 'qosReserved', 'qos-reserved', `<Warning: Alpha feature> ResourceName=Percentage pairs (e.g. memory=50%) saying how much of the pods' resource requests is reserved at the QoS level. Memory only. Needs the QOSReserved feature gate (and --cgroups-per-qos).`, D);
  fs.stringVar(cfg, 'topologyManagerPolicy', 'topology-manager-policy', "The Topology Manager policy: 'none', 'best-effort', 'restricted' or 'single-numa-node'. (Keelson: 'none' only.)", D);
  fs.stringVar(cfg, 'topologyManagerScope', 'topology-manager-scope', `Where topology hints apply: the Topology Manager gathers hints from the hint providers and applies them to this scope when admitting a pod. 'container' or 'pod'. ${NO_EFFECT}`, D);
  fs.mapStringStringVar(cfg, 'topologyManagerPolicyOptions', 'topology-manager-policy-options', `key=value options fine-tuning the Topology Manager policy; when absent, the default behaviour. ${NO_EFFECT}`, { ...D, noSplit: true });
  fs.durationVar(cfg, 'runtimeRequestTimeout', 'runtime-request-timeout', 'The timeout of every runtime request but the long-running ones (pull, logs, exec and attach). On timeout the kubelet cancels the request, reports an error and tries again later.', D);
  fs.int32Var(cfg, 'maxPods', 'max-pods', 'How many Pods this kubelet can run.', D);
  fs.int64Var(cfg, 'podPidsLimit', 'pod-max-pids', "The most processes in a pod (its cgroup's pids.max, with --cgroups-per-qos). -1 means the node's allocatable pid capacity.", D);
  fs.int32Var(cfg, 'podsPerCore', 'pods-per-core', 'How many Pods per core this kubelet can run. The total never exceeds max-pods, which applies when this computes more. 0 means no per-core limit.', D);
  fs.boolVar(cfg, 'runOnce', 'runonce', 'When true, start the pods of the static pod files or URL, then exit. Exclusive with --enable-server', D);
  fs.boolVar(cfg, 'cpuCFSQuota', 'cpu-cfs-quota', 'Enforce CPU CFS quota for containers with CPU limits', D);
  fs.durationVar(cfg, 'cpuCFSQuotaPeriod', 'cpu-cfs-quota-period', "The CPU CFS quota period (cpu.cfs_period_us); by default the Linux kernel's", D);
  fs.boolVar(cfg, 'enableControllerAttachDetach', 'enable-controller-attach-detach', "Let the Attach/Detach controller attach and detach the volumes of this node's pods, and keep the kubelet from doing it", D);
  fs.stringVar(cfg, 'containerLogMaxSize', 'container-log-max-size', '<Warning: Beta feature> The size (e.g. 10Mi) a container log file reaches before it is rotated.', D);
  fs.int32Var(cfg, 'containerLogMaxFiles', 'container-log-max-files', '<Warning: Beta feature> The most log files a container may have. Must be >= 2.', D);
  fs.stringsVar(cfg, 'allowedUnsafeSysctls', 'allowed-unsafe-sysctls', 'Unsafe sysctls, or patterns of them ending in *, that pods may set (comma-separated). At your own risk.', D);
  fs.boolVar(cfg, 'kernelMemcgNotification', 'kernel-memcg-notification', `Learn from the kernel's memcg notifications, not by polling, whether memory eviction thresholds are crossed. ${NO_EFFECT}`, D);
  fs.boolVar(cfg, 'localStorageCapacityIsolation', 'local-storage-capacity-isolation', 'Isolate local ephemeral storage; when false, local storage isolation is off', D);
  fs.int64Var(cfg, 'maxOpenFiles', 'max-open-files', 'How many files the kubelet process may open (soft and hard limit, set at start with util-linux\'s prlimit; a failure is logged and the start goes on).', D);

  // eviction
  fs.mapStringStringVar(cfg, 'evictionHard', 'eviction-hard', `Eviction thresholds (e.g. memory.available<1Gi); a pod is evicted when one is met. ${NO_EVICTION}`, { ...D, sep: '<' });
  fs.mapStringStringVar(cfg, 'evictionSoft', 'eviction-soft', `Eviction thresholds (e.g. memory.available<1.5Gi); a pod is evicted when one is met for its grace period. ${NO_EVICTION}`, { ...D, sep: '<' });
  fs.mapStringStringVar(cfg, 'evictionSoftGracePeriod', 'eviction-soft-grace-period', `Eviction grace periods (e.g. memory.available=1m30s): how long a soft eviction threshold must hold before a pod is evicted. ${NO_EVICTION}`, D);
  fs.durationVar(cfg, 'evictionPressureTransitionPeriod', 'eviction-pressure-transition-period', `How long the kubelet waits before it leaves an eviction pressure condition. ${NO_EVICTION}`, D);
  fs.int32Var(cfg, 'evictionMaxPodGracePeriod', 'eviction-max-pod-grace-period', `The longest grace period (seconds) given to pods terminated because a soft eviction threshold is met. Negative: the pod's own value. ${NO_EVICTION}`, D);
  fs.mapStringStringVar(cfg, 'evictionMinimumReclaim', 'eviction-minimum-reclaim', `Minimum reclaims (e.g. imagefs.available=2Gi): the least the kubelet frees of a resource under pressure when it evicts a pod. ${NO_EVICTION}`, D);
  fs.boolVar(cfg, 'protectKernelDefaults', 'protect-kernel-defaults', "The kubelet's behaviour with kernel tunables: when set, the kubelet fails if a tunable differs from the kubelet's default. (Keelson neither changes nor checks kernel tunables: no effect.)", D);
  fs.stringVar(cfg, 'reservedSystemCPUs', 'reserved-cpus', `CPUs or CPU ranges (comma-separated) reserved for the system and Kubernetes. The list wins over the cpu counts of --system-reserved and --kube-reserved. (Keelson pins no CPUs.)`, D);

  // node allocatable
  fs.mapStringStringVar(cfg, 'systemReserved', 'system-reserved', 'ResourceName=ResourceQuantity pairs (e.g. cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000) reserved for what is not Kubernetes. cpu, memory, pid and local ephemeral storage of the root file system only. See https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/ for details. [default=none]', D);
  fs.mapStringStringVar(cfg, 'kubeReserved', 'kube-reserved', "ResourceName=ResourceQuantity pairs (e.g. cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000) reserved for Kubernetes' system components. cpu, memory, pid and local ephemeral storage of the root file system only. See https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/ for details. [default=none]", D);
  fs.stringsVar(cfg, 'enforceNodeAllocatable', 'enforce-node-allocatable', `Comma-separated levels of node allocatable enforcement: 'none', 'pods', 'system-reserved', 'system-reserved-compressible', 'kube-reserved' and 'kube-reserved-compressible'. The four last need --system-reserved-cgroup or --kube-reserved-cgroup, respectively. 'none' goes alone. See https://kubernetes.io/docs/tasks/administer-cluster/reserve-compute-resources/ for details. (Keelson enforces 'pods': kubepods gets the node's allocatable CPU shares, memory and pids; the reserved levels are accepted and checked, and no limit is set on their cgroups.)`, D);
  fs.stringVar(cfg, 'systemReservedCgroup', 'system-reserved-cgroup', `Absolute name of the top-level cgroup managing the non-Kubernetes components whose resources --system-reserved reserves, e.g. '/system-reserved'; limited to --system-reserved when --enforce-node-allocatable has system-reserved. [default='']`, D);
  fs.stringVar(cfg, 'kubeReservedCgroup', 'kube-reserved-cgroup', `Absolute name of the top-level cgroup managing the Kubernetes components whose resources --kube-reserved reserves, e.g. '/kube-reserved'; limited to --kube-reserved when --enforce-node-allocatable has kube-reserved. [default='']`, D);

  // memory manager
  fs.stringVar(cfg, 'memoryManagerPolicy', 'memory-manager-policy', "The Memory Manager policy: 'None' or 'Static'. (Keelson: 'None' only.)", D);
  fs.var(new ReservedMemoryValue(cfg), 'reserved-memory', `Memory reservations of NUMA nodes, comma-separated (e.g. --reserved-memory 0:memory=1Gi,hugepages-1M=2Gi --reserved-memory 1:memory=2Gi). Each memory type's total should equal the sum of kube-reserved, system-reserved and the eviction threshold. See https://kubernetes.io/docs/tasks/administer-cluster/memory-manager/#reserved-memory-flag for details. ${NO_EFFECT}`, D);

  // fail-cgroupv1 (a configuration field the kubelet does not deprecate as a flag)
  fs.boolVar(cfg, 'failCgroupV1', 'fail-cgroupv1', 'Refuse to start the kubelet on a host using cgroup v1.');

  // logging: component-base's logs flags, bound to the configuration's logging section; their
  // texts are klog's (cli/klog.ts), which declares the same flags for the other daemons
  const texts = new FlagSet('');
  klog.addFlags(texts);
  const usage = (name: string) => texts.lookup(name)?.usage ?? '';
  const l = cfg.logging;
  fs.stringVar(l, 'format', 'logging-format', usage('logging-format'), D);
  fs.durationVar(l, 'flushFrequency', 'log-flush-frequency', usage('log-flush-frequency'));
  fs.var(new VerbosityValue(l), 'v', usage('v'), { shorthand: 'v' });
  fs.var(new VModuleValue(l), 'vmodule', usage('vmodule'));
  fs.boolVar(l.options.text, 'splitStream', 'log-text-split-stream', usage('log-text-split-stream'), D);
  fs.var(new QuantityValue(slotOf(l.options.text, 'infoBufferSize')), 'log-text-info-buffer-size', usage('log-text-info-buffer-size'), D);

  fs.bool('help', false, `help for ${cmd.name}`, { shorthand: 'h' });
  fs.version();
}

/** cliflag.PreferredTLSCipherNames (Go 1.23's secure suites), for --tls-cipher-suites' help */
const PREFERRED_CIPHERS = [
  'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA',
  'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA',
  'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
];
/** cliflag.InsecureTLSCipherNames */
const INSECURE_CIPHERS = [
  'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_ECDSA_WITH_RC4_128_SHA', 'TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA',
  'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_RSA_WITH_RC4_128_SHA', 'TLS_RSA_WITH_3DES_EDE_CBC_SHA', 'TLS_RSA_WITH_AES_128_CBC_SHA',
  'TLS_RSA_WITH_AES_128_CBC_SHA256', 'TLS_RSA_WITH_AES_128_GCM_SHA256', 'TLS_RSA_WITH_AES_256_CBC_SHA', 'TLS_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_RSA_WITH_RC4_128_SHA',
];

const discard = { write: () => true };

/**
 * kubeletConfigFlagPrecedence: parses the command line's flags again, in the order given, into
 * `config` (a configuration loaded from --config and --config-dir), so that they win over it.
 * `given` is the parsed flag set's givenFlags(). A map flag replaces the file's map; the feature
 * gates merge, the command line's winning; list flags replace the file's list on first use.
 */
export function applyKubeletFlagsOver(config: KubeletConfiguration, given: readonly { name: string; value: string }[], gate: FeatureGate): void {
  const scratch = new Command({ use: 'kubelet' });
  declareKubeletFlags(scratch, config, defaultKubeletFlags(), gate);
  const fs = scratch.localFlags;
  fs.output = discard;
  const original = { ...config.featureGates };
  for (const g of given) fs.set(g.name, g.value);
  for (const [k, v] of Object.entries(original)) if (!(k in config.featureGates)) config.featureGates[k] = v;
}

/**
 * The kubelet's option flow after `keelson kubelet`'s command line is parsed into `cfg` and `f`
 * (declared with declareKubeletFlags): feature gates, flag validation, --config, --config-dir, the
 * flags again over them, validation (options.ts resolveKubeletConfiguration). Throws with the
 * kubelet's messages. Then the caller applies logging (applyLoggingConfiguration), checks
 * validateKeelsonSupport and checkKubeletStartup, and runs.
 */
export function resolveKubeletCommandLine(flags: FlagSet, cfg: KubeletConfiguration, f: KubeletFlags, gate: FeatureGate, o: { cgroupV1?: boolean } = {}): ResolvedKubelet {
  return resolveKubeletConfiguration({
    flagConfig: cfg,
    flags: f,
    gate,
    cgroupV1: o.cgroupV1,
    changed: (name) => flags.changed(name),
    reapplyFlags: (config) => applyKubeletFlagsOver(config, flags.givenFlags(), gate),
  });
}
