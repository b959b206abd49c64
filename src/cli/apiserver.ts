// `keelson server` (the all-in-one cluster) and `keelson apiserver` (the API server alone, with
// kube-apiserver's flag names): option declarations, start-up and graceful shutdown.
import { existsSync, mkdirSync, readFileSync, watchFile } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Command, FeatureGate, type FlagSet, type NamedCertKey } from './flags.js';
import * as klog from './klog.js';
import { daemonLogger, exitOnSignals } from './daemon.js';
import { declareControllerManagerFlags } from './controllerflags.js';
import { getVersionInfo, userAgent } from './version.js';
import { ensureFrontProxyPKI, ensurePKI, FRONT_PROXY_CLIENT_CN, issueClientCert } from '../apiserver/pki.js';
import { ensureKubeconfig } from '../client/kubeconfig.js';
import { defaultControllerManagerOptions, isControllerEnabled, validateControllerManagerOptions, type ControllerManagerOptions } from '../controllers/options.js';
import { controllerManagerCert, startControllers } from './controllers.js'; // controllers hook (keelson server only)
import { insecureTLSCipherNames, loadCertKeyFiles, loadSNICertKeys, preferredTLSCipherNames, prepareServing, tlsPossibleVersions } from '../apiserver/tls.js';
import { APIServer, applyEncryptionConfig, type Logger } from '../apiserver/server.js';
import type { ClusterAuthenticationInfo } from '../apiserver/authinfo.js';
import { lockDataDir } from './datadirlock.js';
import { clusterCapabilities } from '../schema/validation/pod.js';
import { encryptionConfigHash, loadEncryptionConfig } from '../apiserver/encryption/config.js';
import { resolveAuthorizationModes } from '../apiserver/rbac/index.js';
import { Auditor, defaultAuditLogOptions, loadPolicyFile, LogBackend, validateAuditLogOptions, type AuditLogOptions } from '../apiserver/audit/index.js';
import { validateAdmissionPluginFlags } from '../apiserver/admission/chain.js';
import { admissionFlags } from '../apiserver/admission/wiring.js';
import { MemoryBackend } from '../storage/memory.js';
import { SqliteBackend } from '../storage/sqlite.js';
import type { Backend } from '../storage/interface.js';
import {
  authenticationFlagWarnings, buildAuthenticatorFromFlags, CertPool, defaultAuthenticationFlags, ensureServiceAccountKey, issuerDiscovery, newTokenSigner, parseCertsPEM, privateKeyFromFile,
  serviceAccountVerificationKeys, validateAuthenticationFlags, type AuthenticationFlags, type RequestAuthenticator, LEGACY_ISSUER, legacyClaims, signToken,
} from '../apiserver/authn/index.js';
import { readFileSync as readFile } from 'node:fs';
import { createPublicKey } from 'node:crypto';
import { DEFAULT_KUBELET_TIMEOUT_MS, PREFERRED_ADDRESS_TYPES } from '../apiserver/connect.js';
import { declareKubeletClientFlags, kubeletClientFromFlags } from './kubeletclient.js';
import { startEmbeddedKubelet, startEmbeddedProxy } from './agent.js';
import { SCHEDULER_USER, startEmbeddedScheduler } from '../scheduler/scheduler.js';
import { processProfiler } from '../client/profiling.js';
import { DEFAULT_METRIC_RESOLUTION_MS, MIN_METRIC_RESOLUTION_MS } from '../apiserver/metricsserver/index.js';
import { goFormatDuration } from '../machinery/gostrings.js';
import { LOCAL_STORAGE_COMPONENT, removeLocalPathClass, startLocalPathProvisioner } from '../controllers/localpath.js';
import { SERVICELB_COMPONENT, removeServiceLBIngresses, startServiceLB } from '../controllers/servicelb.js';
import { RESTClient } from '../client/rest.js';
import { isIP } from 'node:net';
import { parseCIDR } from '../schema/validation/util.js';
import { spawnSync } from 'node:child_process';
import { startEmbeddedDNS } from '../dns/embedded.js';
import { DEFAULT_FORWARD_FROM } from '../dns/server.js';
import { CLUSTER_DNS_USER, nthAddress, removeDNSService } from '../dns/service.js';
import { defaultNodeIP } from '../nodeagent/node.js';

/** the items of k3s' --disable that Keelson has no component for */
const K3S_ONLY_COMPONENTS = ['traefik', 'runtimes'];
/** k3s' --disable item of the cluster DNS */
const DNS_COMPONENT = 'coredns';
/** the items of --disable that Keelson has: the built-in metrics-server, the local-path provisioner and the cluster DNS */
const KEELSON_COMPONENTS = ['metrics-server', LOCAL_STORAGE_COMPONENT, DNS_COMPONENT, SERVICELB_COMPONENT];

export interface APIServerOptions {
  dataDir: string;
  /** keelson server's node agent (cli/agent.ts): the runtime's CRI endpoint ('' for none), the node's name and IP, more kubelet flags */
  agent: { containerRuntimeEndpoint: string; nodeName: string; nodeIP: string; kubeletArgs: string[]; disableKubeProxy: boolean; kubeProxyArgs: string[]; clusterCIDR: string };
  /** keelson server: run no scheduler (k3s' --disable-scheduler) */
  disableScheduler: boolean;
  /** keelson server: packaged components not to run (k3s' --disable; Keelson's: metrics-server, local-storage) */
  disable: string[];
  /** keelson server: where the local-path provisioner makes its volumes' directories ('' for <data-dir>/storage; k3s' --default-local-storage-path) */
  defaultLocalStoragePath: string;
  /** keelson server: the built-in metrics-server's --metric-resolution (ms) */
  metricResolution: number;
  /** keelson server: the kube-dns Service's cluster IP ('' for the 10th address of the service range; k3s' --cluster-dns) */
  clusterDNS: string;
  /** keelson server: the cluster domain (k3s' --cluster-domain) */
  clusterDomain: string;
  bindAddress: string;
  securePort: number;
  storageBackend: string;
  etcdCompactionInterval: number;
  encryptionProviderConfig: string;
  encryptionProviderConfigAutomaticReload: boolean;
  livezGracePeriod: number;
  shutdownDelayDuration: number;
  /** --min-request-timeout, in seconds (an int flag, as kube-apiserver's) */
  minRequestTimeout: number;
  requestTimeout: number;
  /** --event-ttl, in milliseconds */
  eventTTL: number;
  /** --enable-garbage-collector */
  enableGarbageCollector: boolean;
  maxRequestsInFlight: number;
  maxMutatingRequestsInFlight: number;
  /** --enable-priority-and-fairness: only false, what Keelson does */
  enablePriorityAndFairness: boolean;
  /** --profiling: /debug/pprof/ over V8's profilers (client/profiling.ts) */
  profiling: boolean;
  /** --contention-profiling: accepted; Node.js has no block profiler (a warning says so) */
  contentionProfiling: boolean;
  audit: { policyFile: string; logVersion: string; log: AuditLogOptions };
  certDir: string;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  tlsMinVersion: string;
  tlsCipherSuites: string[];
  tlsSNICertKey: NamedCertKey[];
  http2MaxStreamsPerConnection: number;
  disableHTTP2Serving: boolean;
  permitPortSharing: boolean;
  permitAddressSharing: boolean;
  clientCAFile: string;
  advertiseAddress: string;
  /** --allow-privileged: containers may ask for privileged mode */
  allowPrivileged: boolean;
  serviceClusterIPRange: string;
  serviceNodePortRange: string;
  authn: AuthenticationFlags;
  authorizationMode: string[];
  authorizationConfig: string;
  enableAdmissionPlugins: string[];
  disableAdmissionPlugins: string[];
  defaultNotReadyTolerationSeconds: number;
  defaultUnreachableTolerationSeconds: number;
  /** the embedded controller manager's options (keelson server only) */
  controllerManager: ControllerManagerOptions;
  /** --enable-aggregator-routing */
  enableAggregatorRouting: boolean;
  /** --proxy-client-cert-file, --proxy-client-key-file */
  proxyClientCertFile: string;
  proxyClientKeyFile: string;
  /** --kubelet-client-certificate, --kubelet-client-key, --kubelet-certificate-authority, --kubelet-preferred-address-types, --kubelet-timeout (ms) */
  kubelet: { clientCertificate: string; clientKey: string; certificateAuthority: string; preferredAddressTypes: string[]; timeout: number };
}

/**
 * The feature gates Keelson's API server knows, with Kubernetes 1.33's defaults and stages, but
 * where the specification states another: WatchList (streaming lists) and ListFromCacheSnapshot
 * are on, as the specification says (Kubernetes turns them on by default in 1.34; 1.33 has them
 * off), and RemoteRequestHeaderUID is on (beta in 1.34, alpha in 1.33).
 */
export const APISERVER_FEATURES = {
  APIResponseCompression: { default: true, preRelease: 'BETA' },
  AllowUnsafeMalformedObjectDeletion: { default: false, preRelease: 'ALPHA' },
  CBORServingAndStorage: { default: false, preRelease: 'ALPHA' },
  ConsistentListFromCache: { default: true, preRelease: 'BETA' },
  KubeletServiceAccountTokenForCredentialProviders: { default: false, preRelease: 'ALPHA' },
  ListFromCacheSnapshot: { default: true, preRelease: 'BETA' },
  RemoteRequestHeaderUID: { default: true, preRelease: 'BETA' },
  ServiceAccountNodeAudienceRestriction: { default: true, preRelease: 'BETA' },
  WatchList: { default: true, preRelease: 'BETA' },
  ...klog.loggingFeatureSpecs,
} as const;

function defaults(allInOne: boolean): APIServerOptions {
  return {
    dataDir: '.keelson',
    agent: { containerRuntimeEndpoint: '', nodeName: '', nodeIP: '', kubeletArgs: [], disableKubeProxy: false, kubeProxyArgs: [], clusterCIDR: '' },
    disableScheduler: false,
    disable: [],
    defaultLocalStoragePath: '',
    clusterDNS: '',
    clusterDomain: 'cluster.local',
    metricResolution: DEFAULT_METRIC_RESOLUTION_MS,
    bindAddress: '0.0.0.0',
    securePort: 6443,
    storageBackend: 'sqlite',
    etcdCompactionInterval: 5 * 60_000,
    encryptionProviderConfig: '',
    encryptionProviderConfigAutomaticReload: false,
    livezGracePeriod: 0,
    shutdownDelayDuration: 0,
    minRequestTimeout: 1800,
    requestTimeout: 60_000,
    eventTTL: 60 * 60_000,
    // kube-apiserver's default (and kube-controller-manager's, which must match it: keelson server
    // runs both halves from this one flag)
    enableGarbageCollector: true,
    maxRequestsInFlight: 400,
    maxMutatingRequestsInFlight: 200,
    // (kube-apiserver's default is true; Keelson has the max-in-flight limits only)
    enablePriorityAndFairness: false,
    // (kube-apiserver's defaults)
    profiling: true,
    contentionProfiling: false,
    audit: { policyFile: '', logVersion: 'audit.k8s.io/v1', log: defaultAuditLogOptions() },
    certDir: '',
    tlsCertFile: '',
    tlsPrivateKeyFile: '',
    tlsMinVersion: '',
    tlsCipherSuites: [],
    tlsSNICertKey: [],
    http2MaxStreamsPerConnection: 0,
    disableHTTP2Serving: false,
    permitPortSharing: false,
    permitAddressSharing: false,
    clientCAFile: '',
    advertiseAddress: '',
    // kube-apiserver's default is false; the all-in-one cluster allows them, as k3s and kubeadm set it
    allowPrivileged: allInOne,
    serviceClusterIPRange: '10.96.0.0/12',
    serviceNodePortRange: '30000-32767',
    authn: defaultAuthenticationFlags(),
    authorizationMode: ['AlwaysAllow'],
    authorizationConfig: '',
    enableAdmissionPlugins: [],
    disableAdmissionPlugins: [],
    defaultNotReadyTolerationSeconds: 300,
    defaultUnreachableTolerationSeconds: 300,
    controllerManager: defaultControllerManagerOptions(),
    enableAggregatorRouting: false,
    proxyClientCertFile: '',
    proxyClientKeyFile: '',
    kubelet: { clientCertificate: '', clientKey: '', certificateAuthority: '', // (keelson server reaches its node agents by address first, as k3s does: a node's Hostname is
    // its --hostname-override, which need not resolve on a laptop or in CI)
    preferredAddressTypes: allInOne ? ['InternalIP', 'ExternalIP', 'Hostname', 'InternalDNS', 'ExternalDNS'] : [...PREFERRED_ADDRESS_TYPES], timeout: DEFAULT_KUBELET_TIMEOUT_MS },
  };
}

function declare(cmd: Command, o: APIServerOptions, gate: FeatureGate, allInOne: boolean): void {
  const s = cmd.sections;
  if (allInOne) {
    const k = s.flagSet('keelson');
    k.stringVar(o, 'dataDir', 'data-dir', 'Directory for the cluster state: the database, the generated certificates and the admin kubeconfig.');
    k.boolVar(o, 'disableScheduler', 'disable-scheduler', 'Do not run the scheduler in this server (as k3s\' flag): pods stay unscheduled until another scheduler, e.g. keelson scheduler, binds them.');
    k.stringsVar(o, 'disable', 'disable', `Do not run these packaged components, and delete what they created (as k3s' flag). Keelson's: metrics-server (the built-in metrics.k8s.io, for kubectl top), local-storage (the local-path provisioner and its default StorageClass local-path), coredns (the cluster DNS and its kube-system/kube-dns Service) and servicelb (the node's address as LoadBalancer Services' ingress; the ingresses it wrote are cleared). k3s' other items (${K3S_ONLY_COMPONENTS.join(', ')}) are accepted: Keelson has none of them.`);
    k.stringVar(o, 'defaultLocalStoragePath', 'default-local-storage-path', 'The directory under which the local-path provisioner makes the volumes of the default StorageClass local-path (as k3s\' flag), when this server runs its own node (--container-runtime-endpoint). (default "<data-dir>/storage")');
    k.stringVar(o, 'clusterDNS', 'cluster-dns', 'The cluster IP of the kube-dns Service, the nameserver of the pods of this server\'s node (as k3s\' flag). (default the 10th address of --service-cluster-ip-range: 10.96.0.10)');
    k.stringVar(o, 'clusterDomain', 'cluster-domain', 'The cluster\'s DNS domain, served by the cluster DNS and searched by the pods of this server\'s node (as k3s\' flag).');
    k.durationVar(o, 'metricResolution', 'metric-resolution', 'How often the built-in metrics-server scrapes each node\'s kubelet (/metrics/resource), as metrics-server\'s flag; at least 10s.');
    const a = s.flagSet('node agent');
    a.stringVar(o.agent, 'containerRuntimeEndpoint', 'container-runtime-endpoint', 'The CRI endpoint of a container runtime on this machine (containerd: unix:///run/containerd/containerd.sock). When given, this machine joins the cluster as a node: a node agent (keelson kubelet) runs in a process of its own, with its state under <data-dir>/kubelet. Empty: no node agent.');
    a.stringVar(o.agent, 'nodeName', 'node-name', 'The name of this machine\'s node (default: the host name, lower-cased).');
    a.stringVar(o.agent, 'nodeIP', 'node-ip', 'The IP address of this machine\'s node (default: the host\'s first address).');
    a.stringsVar(o.agent, 'kubeletArgs', 'kubelet-arg', 'A flag for the node agent, name=value (repeatable), e.g. --kubelet-arg=max-pods=50.');
    a.boolVar(o.agent, 'disableKubeProxy', 'disable-kube-proxy', 'Do not run the service proxy (keelson proxy, kube-proxy\'s nftables mode) beside the node agent (as k3s\' flag): pods then reach no Service cluster IP.');
    a.stringsVar(o.agent, 'kubeProxyArgs', 'kube-proxy-arg', 'A flag for the service proxy, name=value (repeatable, as k3s\' flag), e.g. --kube-proxy-arg=masquerade-all=true.');
    a.stringVar(o.agent, 'clusterCIDR', 'cluster-cidr', 'The pods\' IP range (the container runtime\'s CNI network), for the service proxy: Service traffic from outside it is masqueraded. Empty: none given.');
  }
  const g = s.flagSet('generic');
  g.boolVar(o, 'allowPrivileged', 'allow-privileged', 'If true, allow privileged containers.');
  g.stringVar(o, 'advertiseAddress', 'advertise-address', 'The IP address on which to advertise the apiserver to members of the cluster. If blank, the --bind-address will be used.');
  g.durationVar(o, 'livezGracePeriod', 'livez-grace-period', 'This option represents the maximum amount of time it should take for apiserver to complete its startup sequence and become live. From apiserver\'s start time to when this amount of time has elapsed, /livez will assume that unfinished post-start hooks will complete successfully and therefore return true.');
  g.boolVar(o, 'profiling', 'profiling', 'Enable profiling via web interface host:port/debug/pprof/. (Keelson\'s profiles come from V8\'s profilers, in Go\'s pprof format: profile (CPU) and heap; see the README.)');
  g.boolVar(o, 'contentionProfiling', 'contention-profiling', 'Enable block profiling, if profiling is enabled. (Node.js has no block profiler: accepted with a warning, and /debug/pprof/block stays empty.)');
  g.boolVar(o, 'enablePriorityAndFairness', 'enable-priority-and-fairness', 'If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness. (Keelson has no API Priority and Fairness: only false is taken, and requests are limited by --max-requests-inflight and --max-mutating-requests-inflight, as kube-apiserver limits them with false. The FlowSchemas and PriorityLevelConfigurations are kept all the same.)');
  g.intVar(o, 'maxMutatingRequestsInFlight', 'max-mutating-requests-inflight', 'The maximum number of mutating requests in flight at a given time. When the server exceeds this, it rejects requests with 429 Too Many Requests and Retry-After. Long-running requests (watch, exec, attach, log, port-forward, proxy) are not counted, and members of system:masters are never rejected. Zero for no limit. (Keelson has no API Priority and Fairness: this limit applies as kube-apiserver applies it with --enable-priority-and-fairness=false.)');
  g.intVar(o, 'maxRequestsInFlight', 'max-requests-inflight', 'The maximum number of non-mutating (get, list) requests in flight at a given time. When the server exceeds this, it rejects requests with 429 Too Many Requests and Retry-After. Long-running requests are not counted, and members of system:masters are never rejected. Zero for no limit.');
  g.intVar(o, 'minRequestTimeout', 'min-request-timeout', 'An optional field indicating the minimum number of seconds a handler must keep a request open before timing it out. Currently only honored by the watch request handler, which picks a randomized value above this number as the connection timeout, to spread out load.');
  g.durationVar(o, 'requestTimeout', 'request-timeout', 'An optional field indicating the duration a handler must keep a request open before timing it out (504 Timeout). This is the default request timeout for requests but may be overridden by flags such as --min-request-timeout for specific types of requests, and shortened by the timeout parameter of a request.');
  g.stringVar(o, 'serviceClusterIPRange', 'service-cluster-ip-range', 'A CIDR notation IP range from which to assign service cluster IPs. The first address is the kubernetes Service\'s. This must not overlap with any IP ranges assigned to nodes or pods.');
  g.stringVar(o, 'serviceNodePortRange', 'service-node-port-range', 'A port range to reserve for services with NodePort visibility. This must not overlap with the ephemeral port range on nodes. Example: \'30000-32767\'. Inclusive at both ends of the range.');
  g.durationVar(o, 'shutdownDelayDuration', 'shutdown-delay-duration', 'Time to delay the termination. During that time the server keeps serving requests normally. The endpoints /healthz and /livez will return success, but /readyz immediately returns failure. Graceful termination starts after this delay has elapsed. This can be used to allow load balancer to stop sending traffic to this server.');
  const e = s.flagSet('etcd');
  e.boolVar(
    o,
    'enableGarbageCollector',
    'enable-garbage-collector',
    "Enables the generic garbage collector. MUST be synced with the corresponding flag of the kube-controller-manager: with it, a delete leaves the orphan and foregroundDeletion finalizers (and the kind's default, orphan for ReplicationControllers and batch/v1 Jobs) for a garbage collector to process. (keelson server runs its own garbage collector with it.)",
  );
  e.durationVar(o, 'etcdCompactionInterval', 'etcd-compaction-interval', 'The interval of compaction requests. If 0, the compaction request from apiserver is disabled. History older than one interval is compacted; watches and continue tokens older than the compacted revision get 410 Gone.');
  e.stringVar(o, 'encryptionProviderConfig', 'encryption-provider-config', 'The file with the configuration of the encryption providers (an EncryptionConfiguration) used to encrypt resources such as secrets before they are stored.');
  e.boolVar(o, 'encryptionProviderConfigAutomaticReload', 'encryption-provider-config-automatic-reload', 'Watch the file given by --encryption-provider-config and put its new contents to use when they change on disk, without a restart. A file that cannot be used is reported and the configuration in use stays.');
  e.stringVar(o, 'storageBackend', 'storage-backend', 'The storage backend for persistence. Options: \'sqlite\' (embedded, durable, the default), \'memory\' (nothing is kept after exit).');
  const ss = s.flagSet('secure serving');
  ss.stringVar(o, 'bindAddress', 'bind-address', 'The IP address on which to listen for the --secure-port port. The associated interface(s) must be reachable by the rest of the cluster, and by CLI/web clients. If blank or an unspecified address (0.0.0.0 or ::), all interfaces and IP address families will be used.');
  ss.stringVar(o, 'certDir', 'cert-dir', 'The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are provided, this flag will be ignored. (default "<data-dir>/pki")');
  ss.intVar(o, 'securePort', 'secure-port', 'The port on which to serve HTTPS with authentication and authorization. It cannot be switched off with 0.');
  ss.stringVar(o, 'tlsCertFile', 'tls-cert-file', 'File containing the default x509 Certificate for HTTPS. (CA cert, if any, concatenated after server cert). If HTTPS serving is enabled, and --tls-cert-file and --tls-private-key-file are not provided, a self-signed certificate and key are generated for the public address and saved to the directory specified by --cert-dir.');
  ss.stringVar(o, 'tlsPrivateKeyFile', 'tls-private-key-file', 'File containing the default x509 private key matching --tls-cert-file.');
  ss.boolVar(o, 'disableHTTP2Serving', 'disable-http2-serving', 'If true, the secure port speaks HTTP/1.1 only: HTTP/2 is not offered to clients. [default=false]');
  ss.intVar(o, 'http2MaxStreamsPerConnection', 'http2-max-streams-per-connection', 'The most streams a client may open at once on one HTTP/2 connection to the server. Zero means the default, 100.');
  ss.boolVar(o, 'permitAddressSharing', 'permit-address-sharing', 'If true, SO_REUSEADDR will be used when binding the port, so that wildcard and specific addresses can be bound in parallel and sockets in TIME_WAIT do not block a restart. (Node.js always binds this way.) [default=false]');
  ss.boolVar(o, 'permitPortSharing', 'permit-port-sharing', 'If true, SO_REUSEPORT will be used when binding the port, which lets more than one instance bind the same address and port (needs Node.js 22.12 or later). [default=false]');
  ss.stringsVar(o, 'tlsCipherSuites', 'tls-cipher-suites', `Comma-separated list of cipher suites for the server, by their Go (IANA) names. If omitted, Go's default cipher suites are used. TLS 1.3 suites are always on. \nPreferred values: ${preferredTLSCipherNames().join(', ')}. \nInsecure values: ${insecureTLSCipherNames().join(', ')}.`);
  ss.stringVar(o, 'tlsMinVersion', 'tls-min-version', `Minimum TLS version supported. Possible values: ${tlsPossibleVersions().join(', ')}`);
  ss.namedCertKeyVar(o, 'tlsSNICertKey', 'tls-sni-cert-key', 'A pair of x509 certificate and private key file paths, optionally followed by a list of domain patterns: fully qualified domain names, possibly with a leading wildcard segment. Patterns may also be IP addresses, but use them only if the server sees the address a client asked for: a client that sends no SNI gets the certificate of the local address it reached. Without patterns, the names of the certificate (its DNS names, and its CommonName when that is a domain) are used. Exact matches win over wildcard matches, explicit patterns over names taken from certificates. Repeat the flag for several pairs. Examples: "example.crt,example.key" or "foo.crt,foo.key:*.foo.com,foo.com".');
  declareAuditFlags(s.flagSet('auditing'), o.audit);
  if (allInOne) o.authorizationMode = ['Node', 'RBAC']; // the all-in-one cluster is shared safely by default, as k3s
  const az = s.flagSet('authorization');
  az.stringsVar(
    o,
    'authorizationMode',
    'authorization-mode',
    'Ordered list of plug-ins to do authorization on secure port. Defaults to AlwaysAllow if --authorization-config is not used (keelson server: Node,RBAC). Comma-delimited list of: AlwaysAllow,AlwaysDeny,Node,RBAC.',
  );
  az.stringVar(o, 'authorizationConfig', 'authorization-config', 'File with Authorization Configuration to configure the authorizer chain. Requires feature gate StructuredAuthorizationConfiguration. This flag is mutually exclusive with the other --authorization-mode and --authorization-webhook-* flags.');
  const adm = s.flagSet('admission');
  const help = Object.fromEntries(admissionFlags().map((d) => [d.name, d.help]));
  adm.intVar(o, 'defaultNotReadyTolerationSeconds', 'default-not-ready-toleration-seconds', help['default-not-ready-toleration-seconds']!);
  adm.intVar(o, 'defaultUnreachableTolerationSeconds', 'default-unreachable-toleration-seconds', help['default-unreachable-toleration-seconds']!);
  adm.stringsVar(o, 'disableAdmissionPlugins', 'disable-admission-plugins', help['disable-admission-plugins']!);
  adm.stringsVar(o, 'enableAdmissionPlugins', 'enable-admission-plugins', help['enable-admission-plugins']!);
  const a = s.flagSet('authentication');
  const f = o.authn;
  a.stringsVar(f, 'apiAudiences', 'api-audiences', 'Identifiers of the API. The service account token authenticator will validate that tokens used against the API are bound to at least one of these audiences. If the --service-account-issuer flag is configured and this flag is not, this field defaults to a single element list containing the issuer URL.');
  a.boolVar(f, 'anonymousAuth', 'anonymous-auth', 'Enables anonymous requests to the secure port of the API server. Requests that are not rejected by another authentication method are treated as anonymous requests. Anonymous requests have a username of system:anonymous, and a group name of system:unauthenticated.');
  a.stringVar(o, 'clientCAFile', 'client-ca-file', 'If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.');
  a.stringsVar(f, 'requestheaderAllowedNames', 'requestheader-allowed-names', 'List of client certificate common names to allow to provide usernames in headers specified by --requestheader-username-headers. If empty, any client certificate validated by the authorities in --requestheader-client-ca-file is allowed.');
  a.stringVar(f, 'requestheaderClientCAFile', 'requestheader-client-ca-file', 'Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers. WARNING: generally do not depend on authorization being already done for incoming requests.');
  a.stringsVar(f, 'requestheaderExtraHeadersPrefix', 'requestheader-extra-headers-prefix', 'List of request header prefixes to inspect. X-Remote-Extra- is suggested.');
  a.stringsVar(f, 'requestheaderGroupHeaders', 'requestheader-group-headers', 'List of request headers to inspect for groups. X-Remote-Group is suggested.');
  a.stringsVar(f, 'requestheaderUIDHeaders', 'requestheader-uid-headers', 'List of request headers to inspect for UIDs. X-Remote-Uid is suggested. Requires the RemoteRequestHeaderUID feature to be enabled.');
  a.stringsVar(f, 'requestheaderUsernameHeaders', 'requestheader-username-headers', 'List of request headers to inspect for usernames. X-Remote-User is common.');
  a.boolVar(f, 'serviceAccountExtendTokenExpiration', 'service-account-extend-token-expiration', 'Turns on projected service account expiration extension during token generation, which helps safe transition from legacy token to bound service account token feature. If this flag is enabled, admission injected tokens would be extended up to 1 year to prevent unexpected failure during transition, ignoring value of service-account-max-token-expiration.');
  a.stringArrayVar(f, 'serviceAccountIssuers', 'service-account-issuer', 'Identifier of the service account token issuer. The issuer will assert this identifier in "iss" claim of issued tokens. This value is a string or URI. If this option is not a valid URI per the OpenID Discovery 1.0 spec, the ServiceAccountIssuerDiscovery feature will remain disabled, even if the feature gate is set to true. It is highly recommended that this value comply with the OpenID spec: https://openid.net/specs/openid-connect-discovery-1_0.html. In practice, this means that service-account-issuer must be an https URL. It is also highly recommended that this URL be capable of serving OpenID discovery documents at {service-account-issuer}/.well-known/openid-configuration. When this flag is specified multiple times, the first is used to generate tokens and all are used to determine which issuers are accepted.');
  a.stringVar(f, 'serviceAccountJWKSURI', 'service-account-jwks-uri', 'Overrides the URI of the JSON Web Key Set named in the discovery document served at /.well-known/openid-configuration, for relying parties that fetch the key set from somewhere other than the API server\'s external address. Must be an https URL.');
  a.stringArrayVar(f, 'serviceAccountKeyFiles', 'service-account-key-file', 'File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify ServiceAccount tokens. The specified file can contain multiple keys, and the flag can be specified multiple times with different files. If unspecified, --tls-private-key-file is used. Must be specified when --service-account-signing-key-file is provided');
  a.boolVar(f, 'serviceAccountLookup', 'service-account-lookup', 'If true, validate ServiceAccount tokens exist in etcd as part of authentication.');
  a.durationVar(f, 'serviceAccountMaxTokenExpiration', 'service-account-max-token-expiration', 'The maximum validity duration of a token created by the service account token issuer. If an otherwise valid TokenRequest with a validity duration larger than this value is requested, a token will be issued with a validity duration of this value.');
  a.stringVar(f, 'serviceAccountSigningKeyFile', 'service-account-signing-key-file', 'Path to the file that contains the current private key of the service account token issuer. The issuer will sign issued ID tokens with this private key.');
  a.stringVar(f, 'tokenAuthFile', 'token-auth-file', 'If set, the file that will be used to secure the secure port of the API server via token authentication.');
  if (allInOne) {
    // kube-controller-manager's flags for the controller manager inside `keelson server`
    const cm = s.flagSet('controller manager');
    const m = o.controllerManager;
    declareControllerManagerFlags(cm, cm, m);
  }
  const misc = s.flagSet('misc');
  misc.boolVar(o, 'enableAggregatorRouting', 'enable-aggregator-routing', 'Proxy the requests of APIServices to an endpoint address of their Service instead of its cluster IP. (Keelson has no kube-proxy and always dials an endpoint of a ClusterIP, NodePort or LoadBalancer Service; with this flag off it also follows ExternalName Services to their external name, and refuses headless Services, as kube-apiserver does with it off; with it on, ExternalName Services are refused, as there.)');
  misc.stringVar(o, 'proxyClientCertFile', 'proxy-client-cert-file', 'The client certificate the aggregator presents when it proxies a request to an extension API server, so that the extension server knows the request comes from this API server. It should be signed by a CA of --requestheader-client-ca-file, which kube-system/extension-apiserver-authentication publishes to extension servers. (keelson server, without this flag and without --requestheader-client-ca-file, creates front-proxy-ca and a front-proxy-client certificate under --cert-dir and uses them, as kubeadm sets a cluster up.)');
  misc.stringVar(o, 'proxyClientKeyFile', 'proxy-client-key-file', 'The private key of --proxy-client-cert-file.');
  declareKubeletClientFlags(misc, o.kubelet, allInOne);
  misc.durationVar(o, 'eventTTL', 'event-ttl', 'Amount of time to retain events. An Event not written for this long is deleted.');
  const fg = s.flagSet('feature gate');
  // (kube-apiserver 1.33's form: component:key=value, `kube` when no component is named)
  gate.addFlag(fg, { component: 'kube' });
  const logs = s.flagSet('logs');
  klog.addFlags(logs);
  const gl = s.flagSet('global');
  gl.bool('help', false, `help for ${cmd.name}`, { shorthand: 'h' });
  gl.version();
}

/** kube-apiserver's audit flags (the log backend; the webhook backend is not offered) */
function declareAuditFlags(a: FlagSet, o: APIServerOptions['audit']): void {
  const l = o.log;
  a.stringVar(o, 'policyFile', 'audit-policy-file', 'Path to the file that defines the audit policy configuration (an audit.k8s.io/v1 Policy).');
  a.stringVar(l, 'path', 'audit-log-path', "If set, all requests coming to the apiserver will be logged to this file.  '-' means standard out.");
  a.intVar(l, 'maxAge', 'audit-log-maxage', 'The maximum number of days to retain old audit log files based on the timestamp encoded in their filename.');
  a.intVar(l, 'maxBackups', 'audit-log-maxbackup', "The maximum number of old audit log files to retain. Setting a value of 0 will mean there's no restriction on the number of files.");
  a.intVar(l, 'maxSize', 'audit-log-maxsize', 'The maximum size in megabytes of the audit log file before it gets rotated.');
  a.stringVar(l as { format: string }, 'format', 'audit-log-format', 'Format of saved audits. "legacy" indicates 1-line text format for each event. "json" indicates structured json format. Known formats are legacy,json.');
  a.stringVar(o, 'logVersion', 'audit-log-version', 'API group and version used for serializing audit events written to log.');
  a.boolVar(l, 'compress', 'audit-log-compress', 'If set, the rotated log files will be compressed using gzip.');
  a.stringVar(l as { mode: string }, 'mode', 'audit-log-mode', 'Strategy for sending audit events. Blocking indicates sending events should block server responses. Batch causes the backend to buffer and write events asynchronously. Known modes are batch,blocking,blocking-strict.');
  const b = l.batch;
  a.intVar(b, 'bufferSize', 'audit-log-batch-buffer-size', 'The size of the buffer to store events before batching and writing. Only used in batch mode.');
  a.intVar(b, 'maxBatchSize', 'audit-log-batch-max-size', 'The maximum size of a batch. Only used in batch mode.');
  a.durationVar(b, 'maxBatchWaitMs', 'audit-log-batch-max-wait', "The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode.");
  a.boolVar(b, 'throttleEnable', 'audit-log-batch-throttle-enable', 'Whether batching throttling is enabled. Only used in batch mode.');
  a.float64Var(b, 'throttleQPS', 'audit-log-batch-throttle-qps', 'Maximum average number of batches per second. Only used in batch mode.');
  a.intVar(b, 'throttleBurst', 'audit-log-batch-throttle-burst', 'Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.');
  const t = l.truncate;
  a.boolVar(t, 'enabled', 'audit-log-truncate-enabled', 'Whether event and batch truncating is enabled.');
  a.int64Var(t, 'maxBatchSize', 'audit-log-truncate-max-batch-size', 'Maximum size of the batch sent to the underlying backend. Actual serialized size can be several hundreds of bytes greater. If a batch exceeds this limit, it is split into several batches of smaller size.');
  a.int64Var(t, 'maxEventSize', 'audit-log-truncate-max-event-size', "Maximum size of the audit event sent to the underlying backend. If the size of an event is greater than this number, first request and response are removed, and if this doesn't reduce the size enough, event is discarded.");
}

/**
 * The audit log from the flags: undefined when nothing is to be recorded (no --audit-log-path,
 * or no --audit-policy-file). A policy file is loaded (and must be valid) whenever it is given.
 */
function auditFromFlags(o: APIServerOptions['audit'], log: Logger): Auditor | undefined {
  const errs = validateAuditLogOptions(o.log);
  if (o.log.path && o.logVersion !== 'audit.k8s.io/v1') errs.push(`invalid group version, allowed versions are "[audit.k8s.io/v1]"`);
  if (errs.length) throw new Error(errs.join(', '));
  const policy = o.policyFile ? loadPolicyFile(o.policyFile, (m) => log.warn(m)) : undefined;
  if (!o.log.path) return undefined;
  if (!policy) {
    log.v(2).info('No audit policy file provided, no events will be recorded for log backend');
    return undefined;
  }
  let backend: LogBackend;
  try {
    backend = new LogBackend(o.log, (e, m) => log.error(e, m));
  } catch (e) {
    throw new Error(`ensureLogFile: ${(e as Error).message}`);
  }
  log.v(2).info('Using audit backend: log', { path: o.log.path, format: o.log.format, mode: o.log.mode });
  return new Auditor(policy, backend, o.log.mode === 'blocking-strict');
}

/**
 * The aggregator's client certificate: --proxy-client-cert-file and --proxy-client-key-file when
 * given; in keelson server, when neither they nor --requestheader-client-ca-file are, the
 * front-proxy CA and client certificate of <cert-dir> (created on first start), with the
 * requestheader flags set as kubeadm sets them (the CA, allowed name front-proxy-client), so that
 * extension API servers and this server itself accept it.
 */
async function frontProxy(o: APIServerOptions, af: AuthenticationFlags, certDir: string, allInOne: boolean, info: (m: string) => void): Promise<{ cert: Buffer | string; key: Buffer | string } | undefined> {
  if (o.proxyClientCertFile || o.proxyClientKeyFile) {
    if (!o.proxyClientCertFile || !o.proxyClientKeyFile) throw new Error('--proxy-client-cert-file and --proxy-client-key-file must be given together');
    const pair = loadCertKeyFiles('proxy-client-cert', o.proxyClientCertFile, o.proxyClientKeyFile);
    return { cert: pair.cert, key: pair.key };
  }
  if (!allInOne || af.requestheaderClientCAFile) return undefined;
  const fp = await ensureFrontProxyPKI(certDir);
  af.requestheaderClientCAFile = fp.paths.caCert;
  if (!af.requestheaderAllowedNames.length) af.requestheaderAllowedNames = [FRONT_PROXY_CLIENT_CN];
  info(`Front proxy: the aggregator presents ${fp.paths.clientCert}; --requestheader-client-ca-file=${fp.paths.caCert}`);
  return { cert: fp.client.certPEM, key: fp.client.keyPEM };
}

/** host:port as Go's net.JoinHostPort writes it (IPv6 in brackets) */
function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** --advertise-address, else the host's first non-loopback IPv4 address, else the bind address */
function advertiseAddress(o: APIServerOptions): string {
  if (o.advertiseAddress) return o.advertiseAddress;
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return o.bindAddress && o.bindAddress !== '0.0.0.0' && o.bindAddress !== '::' ? o.bindAddress : '127.0.0.1';
}


/**
 * What to do about a store that does not open, by SQLite's error: another process holds it, the
 * file or its directory may not be read or written, or the file is damaged.
 */
function storageOpenAdvice(e: unknown, file: string): string {
  const code = String((e as { code?: unknown })?.code ?? '');
  const msg = e instanceof Error ? e.message : String(e);
  if (code.startsWith('SQLITE_BUSY') || /database is locked/.test(msg)) {
    return 'another process holds it: a keelson server on this --data-dir, perhaps from another container or PID namespace; stop it, or give this one another --data-dir';
  }
  if (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_PERM') || code.startsWith('SQLITE_IOERR') || /unable to open database file|readonly database|disk I\/O error/.test(msg)) {
    return `check that this process may read and write ${file} and its directory`;
  }
  return 'restore it from a backup, or move the data directory aside to start a new cluster';
}

async function run(o: APIServerOptions, gate: FeatureGate, flags: FlagSet, allInOne = false): Promise<void> {
  const errs = klog.validateAndApply(gate);
  if (errs.length) throw new Error(errs.join('; '));
  if (o.storageBackend !== 'sqlite' && o.storageBackend !== 'memory') {
    throw new Error(`--storage-backend: invalid value ${JSON.stringify(o.storageBackend)}: supported values are "sqlite" and "memory" (etcd comes later)`);
  }
  clusterCapabilities.allowPrivileged = o.allowPrivileged;
  if (o.securePort <= 0 || o.securePort > 65535) throw new Error(`--secure-port ${o.securePort} must be between 1 and 65535, inclusive. It cannot be turned off with 0`);
  // the serving certificates and TLS options, checked before anything starts (as kube-apiserver's secure serving options)
  const userServing = o.tlsCertFile || o.tlsPrivateKeyFile ? loadCertKeyFiles('serving-cert', o.tlsCertFile, o.tlsPrivateKeyFile) : undefined;
  const sniCertKeys = loadSNICertKeys(o.tlsSNICertKey);
  if (o.encryptionProviderConfigAutomaticReload && !o.encryptionProviderConfig) throw new Error('--encryption-provider-config-automatic-reload must be set with --encryption-provider-config');
  // encryption at rest: a file that cannot be used stops the start, in kube-apiserver's words
  const encryption = o.encryptionProviderConfig ? loadEncryptionConfig(o.encryptionProviderConfig) : undefined;
  const admErrs = validateAdmissionPluginFlags(o.enableAdmissionPlugins, o.disableAdmissionPlugins);
  if (admErrs.length) throw new Error(admErrs.join('; '));
  const limitErrs: string[] = [];
  if (o.maxRequestsInFlight < 0) limitErrs.push('--max-requests-inflight can not be negative value');
  if (o.maxMutatingRequestsInFlight < 0) limitErrs.push('--max-mutating-requests-inflight can not be negative value');
  if (o.requestTimeout < 0) limitErrs.push('--request-timeout can not be negative value');
  if (o.minRequestTimeout < 0) limitErrs.push('--min-request-timeout can not be negative value');
  if (o.eventTTL <= 0) limitErrs.push('--event-ttl must be greater than 0');
  if (o.enablePriorityAndFairness) limitErrs.push('--enable-priority-and-fairness=true is not supported: Keelson has no API Priority and Fairness; leave it out or set it to false (requests are limited by --max-requests-inflight and --max-mutating-requests-inflight)');
  if (limitErrs.length) throw new Error(limitErrs.join(', '));
  if (allInOne) {
    // (an aggregate of errors, as kube-controller-manager prints one: "[a, b]" for more than one)
    const cmErrs = validateControllerManagerOptions(o.controllerManager);
    if (cmErrs.length) throw new Error(cmErrs.length === 1 ? cmErrs[0] : `[${cmErrs.join(', ')}]`);
    for (const d of o.disable) {
      if (!KEELSON_COMPONENTS.includes(d) && !K3S_ONLY_COMPONENTS.includes(d)) throw new Error(`--disable: invalid value ${JSON.stringify(d)}: valid items are ${KEELSON_COMPONENTS.join(', ')} (and k3s' ${K3S_ONLY_COMPONENTS.join(', ')}, which Keelson does not have)`);
    }
    for (const cidr of o.agent.clusterCIDR ? o.agent.clusterCIDR.split(',') : []) {
      if (!parseCIDR(cidr.trim())) throw new Error(`--cluster-cidr: invalid CIDR address: ${cidr.trim()}`);
    }
    if (o.clusterDNS && !isIP(o.clusterDNS)) throw new Error(`--cluster-dns: invalid IP address ${JSON.stringify(o.clusterDNS)}`);
    if (!/^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(o.clusterDomain)) throw new Error(`--cluster-domain: ${JSON.stringify(o.clusterDomain)} is not a valid DNS subdomain (lower case letters, digits, '-' and '.')`);
    if (o.metricResolution < MIN_METRIC_RESOLUTION_MS) throw new Error(`metric-resolution should be a time duration at least 10s, but value ${goFormatDuration(BigInt(o.metricResolution) * 1_000_000n)} provided`);
  }
  const started = Date.now();
  const dataDir = resolve(o.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  lockDataDir(dataDir);
  const certDir = o.certDir ? resolve(o.certDir) : join(dataDir, 'pki');
  const log = daemonLogger();
  // From here on, a promise rejected with no one to handle it is a fault in one piece of work
  // (most often one request): reported, and the server goes on, as kube-apiserver recovers a
  // handler's panic. (Node.js would end the process for it.)
  process.on('unhandledRejection', (reason) => {
    log.error(reason instanceof Error ? reason : new Error(String(reason)), 'Unhandled rejection: a fault of the server, which goes on serving; please report it');
  });
  // the audit policy and log, checked before anything is opened
  const auditor = auditFromFlags(o.audit, log);
  // --profiling: V8's sampling heap profiler runs from the start, as Go's heap sampling does (client/profiling.ts)
  if (o.profiling) await processProfiler().startHeapSampling();
  if (o.profiling && o.contentionProfiling) log.warn('--contention-profiling has no effect: Node.js has no block profiler, /debug/pprof/block and /debug/pprof/mutex stay empty');
  klog.printFlags(flags, 1);
  // which build of the command runs: the bundle (bin/keelson's default) or the compiled modules
  log.v(1).info('Command', { bundle: import.meta.url.includes('/dist/bundle/'), node: process.version });

  const host = hostname();
  const extraIPs: string[] = [];
  if (o.advertiseAddress) extraIPs.push(o.advertiseAddress);
  if (o.bindAddress && o.bindAddress !== '0.0.0.0' && o.bindAddress !== '::') extraIPs.push(o.bindAddress);
  const pki = await ensurePKI(certDir, { hostnames: [host], ips: extraIPs });
  if (pki.generated.ca) log.info('Generated a new cluster certificate authority', { path: pki.paths.caCert });
  const cert: string | Buffer = userServing?.cert ?? pki.serving.certPEM;
  const key: string | Buffer = userServing?.key ?? pki.serving.keyPEM;
  let clientCA: string = pki.ca.certPEM;
  if (o.clientCAFile) clientCA += '\n' + readFileSync(o.clientCAFile, 'utf8');
  const serving = {
    cert,
    key,
    minVersion: o.tlsMinVersion,
    cipherSuites: o.tlsCipherSuites,
    sniCertKeys,
    http2MaxStreamsPerConnection: o.http2MaxStreamsPerConnection,
    disableHTTP2: o.disableHTTP2Serving,
    permitPortSharing: o.permitPortSharing,
  };
  const prepared = prepareServing(serving);
  for (const c of prepared.insecureCiphers) log.warn(`Use of insecure cipher '${c}' detected.`);
  for (const c of prepared.unavailableCiphers) log.warn(`Cipher suite ${c} is not available in this runtime's TLS library and is not offered`);
  if (o.disableHTTP2Serving) log.info('Forcing use of http/1.1 only');
  const af = { ...o.authn, clientCAFile: o.clientCAFile };
  // the front proxy: the client certificate the aggregator presents to extension API servers
  const aggregatorIdentity = await frontProxy(o, af, certDir, allInOne, (m) => log.info(m));
  if (!af.serviceAccountIssuers.length) af.serviceAccountIssuers = ['https://kubernetes.default.svc.cluster.local'];
  const gates = { RemoteRequestHeaderUID: gate.enabled('RemoteRequestHeaderUID'), AllowParsingUserUIDFromCertAuth: true };
  const aerrs = validateAuthenticationFlags(af, gates);
  if (aerrs.length) throw new Error(aerrs.join(', '));
  for (const w of authenticationFlagWarnings(af)) log.warn(w);
  const authorizationModes = resolveAuthorizationModes({
    authorizationMode: o.authorizationMode,
    authorizationModeSet: flags.changed('authorization-mode'),
    authorizationConfig: o.authorizationConfig,
    readFile: (p) => readFileSync(p, 'utf8'),
  });
  if (af.anonymousAuth && authorizationModes.includes('AlwaysAllow')) {
    log.warn('AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer');
    af.anonymousAuth = false;
  }
  // what kube-system/extension-apiserver-authentication publishes: the client CAs, the front proxy's
  const authenticationInfo: ClusterAuthenticationInfo = { clientCA };
  if (af.requestheaderClientCAFile) {
    const requestHeaderCA = readFile(af.requestheaderClientCAFile, 'utf8');
    clientCA += '\n' + requestHeaderCA;
    authenticationInfo.requestHeader = {
      clientCA: requestHeaderCA,
      usernameHeaders: af.requestheaderUsernameHeaders,
      uidHeaders: af.requestheaderUIDHeaders,
      groupHeaders: af.requestheaderGroupHeaders,
      extraHeadersPrefix: af.requestheaderExtraHeadersPrefix,
      allowedNames: af.requestheaderAllowedNames,
    };
  }
  const signingKey = af.serviceAccountSigningKeyFile ? privateKeyFromFile(af.serviceAccountSigningKeyFile) : ensureServiceAccountKey(certDir).privateKey;
  let server!: APIServer;
  const authenticator: RequestAuthenticator = buildAuthenticatorFromFlags(af, {
    reader: (res, ns, name) => server.objectReader(res, ns, name),
    extraClientCAs: new CertPool(parseCertsPEM(pki.ca.certPEM)),
    defaultServiceAccountKeys: [createPublicKey(signingKey)],
    gates,
    warn: (m) => log.warn(m),
    onError: (e) => log.v(2).info('Unable to authenticate the request', { err: e.message }),
  });

  // service account issuer discovery (/.well-known/openid-configuration, /openid/v1/jwks)
  const discovery = issuerDiscovery({
    issuer: af.serviceAccountIssuers[0]!,
    jwksURI: af.serviceAccountJWKSURI,
    externalAddress: joinHostPort(advertiseAddress(o), o.securePort),
    keys: serviceAccountVerificationKeys(af, [createPublicKey(signingKey)]),
  });
  if ('disabled' in discovery) log.error(new Error(discovery.disabled), 'Service account issuer discovery is off');

  let backend: Backend;
  let dbFile = '';
  if (o.storageBackend === 'memory') backend = new MemoryBackend();
  else {
    const dbDir = join(dataDir, 'db');
    mkdirSync(dbDir, { recursive: true, mode: 0o700 });
    dbFile = join(dbDir, 'state.db');
    backend = new SqliteBackend(dbFile);
  }
  try {
    await backend.open();
  } catch (e) {
    // SQLite's own words ("file is not a database") do not say which file, or what to do
    const why = e instanceof Error ? e.message : String(e);
    throw new Error(dbFile ? `failed to open the storage ${dbFile}: ${why} (${storageOpenAdvice(e, dbFile)})` : `failed to open the storage: ${why}`);
  }
  log.info('Opened storage', { backend: backend.name, revision: await backend.currentRevision() });

  const featureGates = new Map<string, boolean>();
  for (const name of Object.keys(APISERVER_FEATURES)) featureGates.set(name, gate.enabled(name));
  server = new APIServer({
    backend,
    bindAddress: o.bindAddress || '0.0.0.0',
    port: o.securePort,
    tls: { ...serving, clientCA },
    authenticationInfo,
    compactionIntervalMs: o.etcdCompactionInterval,
    livezGraceMs: o.livezGracePeriod,
    shutdownDelayMs: o.shutdownDelayDuration,
    minRequestTimeoutMs: o.minRequestTimeout * 1000,
    requestTimeoutMs: o.requestTimeout,
    profiling: o.profiling,
    setVerbosity: (v) => klog.configure({ verbosity: v }),
    eventTTLMs: o.eventTTL,
    garbageCollection: o.enableGarbageCollector,
    maxRequestsInFlight: o.maxRequestsInFlight,
    maxMutatingRequestsInFlight: o.maxMutatingRequestsInFlight,
    audit: auditor,
    featureGates,
    aggregator: { endpointRouting: o.enableAggregatorRouting, identity: aggregatorIdentity },
    metricsServer: allInOne ? { enabled: !o.disable.includes('metrics-server'), resolutionMs: o.metricResolution } : undefined,
    serviceClusterIPRange: o.serviceClusterIPRange,
    serviceNodePortRange: o.serviceNodePortRange,
    advertiseAddress: advertiseAddress(o),
    version: getVersionInfo() as any,
    log,
    authenticator,
    authorizationModes,
    encryption,
    encryptionReload: o.encryptionProviderConfigAutomaticReload,
    admission: {
      enable: o.enableAdmissionPlugins,
      disable: o.disableAdmissionPlugins,
      defaultNotReadyTolerationSeconds: o.defaultNotReadyTolerationSeconds,
      defaultUnreachableTolerationSeconds: o.defaultUnreachableTolerationSeconds,
    },
    issuerDiscovery: 'disabled' in discovery ? undefined : discovery,
    kubeletClient: await kubeletClientFromFlags(o.kubelet, certDir, allInOne ? pki.ca : undefined, log),
    tokenRequest: {
      signer: newTokenSigner(af.serviceAccountIssuers[0]!, signingKey),
      apiAudiences: authenticator.apiAudiences,
      maxExpirationSeconds: Math.floor(af.serviceAccountMaxTokenExpiration / 1000),
      extendExpiration: af.serviceAccountExtendTokenExpiration,
    },
  });
  // (the admin kubeconfig is there before the server can answer /readyz: whoever waits for ready
  // finds it, however long the rest of the start takes after the port is open)
  const shown = o.bindAddress === '0.0.0.0' || o.bindAddress === '' || o.bindAddress === '::' ? '127.0.0.1' : o.bindAddress;
  const serverURL = `https://${shown.includes(':') ? `[${shown}]` : shown}:${o.securePort}`;
  const kubeconfig = join(dataDir, 'kubeconfig');
  ensureKubeconfig(kubeconfig, {
    server: serverURL,
    caPEM: pki.ca.certPEM,
    clientCertPEM: pki.admin.certPEM,
    clientKeyPEM: pki.admin.keyPEM,
    clusterName: 'keelson',
    userName: 'kubernetes-admin',
    contextName: 'keelson',
  });
  await server.start();
  // From here on V8 stops pretenuring allocation sites (allocating their objects straight in the old
  // generation once most of them survived). While the store is loaded into the watch cache that
  // guess is right and saves copying. While serving it is wrong: a site shared by every kind's
  // requests, tenured while one kind's objects survived, keeps pretenuring the short-lived objects
  // of all. Measured with bench/promotion.ts --pods 10000: after 10,000 Pod creates, a ConfigMap
  // create promoted 7.0 KB instead of 2.5 KB and spent twice the time in scavenges. V8 reads the
  // flag each time it decides, so set here it leaves the load as it was (in a one-off measurement,
  // not a bench, a restart on 40,000 objects took 6% longer with the flag set from the start).
  setFlagsFromString('--no-allocation-site-pretenuring');
  if (encryption) log.info('Encryption at rest', { config: o.encryptionProviderConfig, resources: encryption.resources.join(',') });
  if (encryption && o.encryptionProviderConfigAutomaticReload) watchEncryptionConfig(o.encryptionProviderConfig, encryption.contentHash, server, log);
  watchServingCertificates(o, server, log);
  const cpu = process.cpuUsage();
  // (kube-apiserver's line, as its secure serving writes it: printf-style, unquoted)
  klog.log.infof('Serving securely on %s', server.address);
  // startup: since the options were read; sinceProcessStart and cpu: since Node.js started (module loading included)
  log.info('Started', {
    storage: backend.name,
    startup: `${Date.now() - started}ms`,
    sinceProcessStart: `${Math.round(process.uptime() * 1000)}ms`,
    cpu: `${Math.round((cpu.user + cpu.system) / 1000)}ms`,
  });
  log.info('Wrote the admin kubeconfig', { path: kubeconfig });
  process.stderr.write(`Keelson is ready: ${serverURL}\nexport KUBECONFIG=${kubeconfig}\n`);
  // controllers hook (keelson server only; see src/cli/controllers.ts): the controller manager, a loopback client
  // (one flag for both halves, as kube-apiserver's and kube-controller-manager's must match)
  if (allInOne) o.controllerManager.enableGarbageCollector = o.enableGarbageCollector;
  if (allInOne && !o.enableGarbageCollector) {
    // (what a user of Deployments notices first: say it once)
    log.info('The garbage collector is off (--enable-garbage-collector=false): deleting an owner leaves its dependents (a Deployment its ReplicaSets and Pods)');
  }
  if (allInOne && o.enableGarbageCollector && !isControllerEnabled('garbage-collector-controller', o.controllerManager.controllers)) {
    log.warn('--enable-garbage-collector=true with the garbage-collector-controller off: deletes leave orphan and foregroundDeletion finalizers that nothing removes; run a garbage collector against this server, or such objects stay until their finalizers are removed by hand');
  }
  // (the manager signs legacy tokens with the service account key, as kube-controller-manager does
  // with --service-account-private-key-file)
  const legacySigner = newTokenSigner(LEGACY_ISSUER, signingKey);
  const controllers = allInOne
    ? await startControllers({
        serverURL,
        caPEM: pki.ca.certPEM,
        ...(await controllerManagerCert(pki.ca)),
        log,
        options: o.controllerManager,
        legacyTokenGenerator: (sa, secretName) => signToken(legacySigner, legacyClaims(sa, secretName)),
        // (the cluster CA signs approved CSRs of every kubernetes.io signer, as k3s and kubeadm set it up)
        signingCA: { certPEM: pki.ca.certPEM, keyPEM: pki.ca.keyPEM },
        // (the garbage collector's graph of every object, from the watch cache rather than a second watch over HTTPS: localwatch.ts)
        localMetadataSource: (gvr) => server.localMetadataSource(gvr),
      })
    : undefined;
  if (controllers) server.registerComponent('controller-manager', async () => ({ healthy: true, message: 'ok' }));
  // the scheduler (keelson server only): a client of its own, CN system:kube-scheduler, as kubeadm's kube-scheduler
  const scheduler = allInOne && !o.disableScheduler
    ? await startEmbeddedScheduler({ serverURL, caPEM: pki.ca.certPEM, ...(await issueClientCert(pki.ca, SCHEDULER_USER).then((ck) => ({ certPEM: ck.certPEM, keyPEM: ck.keyPEM }))), log })
    : undefined;
  if (scheduler) server.registerComponent('scheduler', async () => ({ healthy: true, message: 'ok' }));
  const nodeName = (o.agent.nodeName || hostname()).toLowerCase();
  // the cluster DNS (k3s' coredns): with a node, unless --disable=coredns; its pods get it as their nameserver
  const withNode = allInOne && !!o.agent.containerRuntimeEndpoint;
  // (it listens on the node's address, which pods reach and an EndpointSlice may hold: not a loopback one)
  const dnsNodeIP = o.agent.nodeIP.split(',')[0]?.trim() || defaultNodeIP();
  const loopbackNode = /^127\./.test(dnsNodeIP) || dnsNodeIP === '::1';
  const dnsWanted = withNode && !o.disable.includes(DNS_COMPONENT) && !loopbackNode;
  if (withNode && !o.disable.includes(DNS_COMPONENT) && loopbackNode) log.info('The node address is a loopback address, which pods cannot reach: no cluster DNS', { nodeIP: dnsNodeIP });
  const dnsIP = dnsWanted ? o.clusterDNS || nthAddress(o.serviceClusterIPRange.split(',')[0]!.trim(), 10) : '';
  const agent =
    allInOne && o.agent.containerRuntimeEndpoint
      ? startEmbeddedKubelet({
          dataDir,
          adminKubeconfig: kubeconfig,
          caFile: pki.paths.caCert,
          endpoint: o.agent.containerRuntimeEndpoint,
          nodeName,
          nodeIP: o.agent.nodeIP,
          extraArgs: o.agent.kubeletArgs,
          dns: dnsWanted ? { clusterIP: dnsIP, domain: o.clusterDomain } : undefined,
          log,
        })
      : undefined;
  // the service proxy (keelson server with its own node, unless --disable-kube-proxy): needs nft
  const proxy = withNode && !o.agent.disableKubeProxy ? await embeddedProxy(o, dataDir, nodeName, serverURL, pki.ca, log) : undefined;
  // the local-path provisioner (keelson server with its own node, k3s' local-storage): a client of
  // its own (CN keelson-local-path-provisioner); --disable=local-storage deletes the class it made
  const localStorage = await localPathProvisioner(o, allInOne && !!o.agent.containerRuntimeEndpoint, dataDir, nodeName, { server: serverURL, ca: pki.ca.certPEM }, pki.ca, log);
  // ServiceLB (keelson server with its own node, k3s' servicelb): LoadBalancer Services get the node's address
  const serviceLB = await serviceLBController(o, withNode, nodeName, { server: serverURL, ca: pki.ca.certPEM }, pki.ca, log);
  const dns = allInOne ? await clusterDNS(o, withNode && !loopbackNode, dnsIP, dnsNodeIP, nodeName, { server: serverURL, ca: pki.ca.certPEM }, pki.ca, log) : undefined;

  // (the controllers stop first: controllers hook)
  // (readyz fails at the signal, not once the components in this process have stopped)
  exitOnSignals(log, () => Promise.resolve(server.announceShutdown()).then(() => Promise.all([agent?.stop(), proxy?.stop()])).then(() => Promise.all([controllers?.stop(), scheduler?.stop(), localStorage?.stop(), serviceLB?.stop(), dns?.stop()])).then(() => server.shutdown()));
  await new Promise(() => {});
}

/** the service proxy beside the server's node agent, when nft is there (else said, and none) */
async function embeddedProxy(o: APIServerOptions, dataDir: string, nodeName: string, serverURL: string, ca: Parameters<typeof issueClientCert>[0], log: Logger): Promise<{ stop(): Promise<void> } | undefined> {
  const nft = spawnSync('nft', ['--version'], { encoding: 'utf8' });
  if (nft.status !== 0) {
    log.warn('No nft command (Debian\'s nftables package): no service proxy, so pods reach no Service cluster IP; install nftables, or pass --disable-kube-proxy to say so', { error: nft.error?.message ?? nft.stderr.trim() });
    return undefined;
  }
  const ck = await issueClientCert(ca, 'system:kube-proxy');
  return startEmbeddedProxy({ dataDir, serverURL, caPEM: ca.certPEM, certPEM: ck.certPEM, keyPEM: ck.keyPEM, nodeName, clusterCIDR: o.agent.clusterCIDR, extraArgs: o.agent.kubeProxyArgs, log });
}

/**
 * The cluster DNS of `keelson server` (dns/, k3s' coredns), a packaged component: on the node's
 * address, port 53 (a free port when 53 is taken or not allowed: the kube-dns Service's
 * `targetPort` follows it, and the service proxy carries pods' queries there), with the kube-dns
 * Service at `ip`, kept by a system:masters client, the DNS itself a client of its own (CN
 * system:coredns). With --disable=coredns, the Service and its EndpointSlice are deleted. Not run
 * without a node or on a loopback node address (`withNode` false). A DNS that cannot start is
 * logged; the server goes on without it.
 */
function clusterDNS(
  o: APIServerOptions,
  withNode: boolean,
  ip: string,
  nodeIP: string,
  nodeName: string,
  server: { server: string; ca: string },
  ca: Parameters<typeof issueClientCert>[0],
  log: Logger,
): Promise<{ stop(): Promise<void> } | undefined> {
  return packagedComponent({
    user: 'keelson-cluster-dns-admin',
    agent: 'cluster-dns',
    disabled: o.disable.includes(DNS_COMPONENT),
    withNode,
    server,
    ca,
    log,
    remove: (client) => removeDNSService(client),
    removeFailure: 'Deleting the kube-dns Service of the cluster DNS failed',
    start: async (adminREST, agent) => {
      const adminClient = new RESTClient({ ...adminREST, userAgent: agent });
      const own = await issueClientCert(ca, CLUSTER_DNS_USER);
      const rest = { ...server, cert: own.certPEM, key: own.keyPEM, userAgent: agent };
      // (names outside the cluster are forwarded for the pods' and private ranges only: no open resolver on the node's address)
      const forwardFrom = [...DEFAULT_FORWARD_FROM, ...(o.agent.clusterCIDR ? o.agent.clusterCIDR.split(',').map((c) => c.trim()) : [])];
      const start = (port: number) => startEmbeddedDNS({ rest, admin: adminClient, clusterDNS: ip, nodeIP, nodeName, port, clusterDomain: o.clusterDomain, forwardFrom, log });
      try {
        let dns;
        try {
          dns = await start(53);
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code !== 'EADDRINUSE' && code !== 'EACCES') throw e;
          log.info('Port 53 of the node address is not free; the cluster DNS takes another, which the kube-dns Service names', { address: nodeIP, error: code });
          dns = await start(0);
        }
        log.info('Serving the cluster DNS', { address: joinHostPort(nodeIP, dns.port), service: `kube-system/kube-dns ${ip}`, domain: o.clusterDomain });
        return { stop: async () => { await dns.stop(); adminClient.close(); } };
      } catch (e) {
        log.error(e, 'The cluster DNS did not start; pods of this node resolve no cluster names', { address: nodeIP });
        adminClient.close();
        return undefined;
      }
    },
  });
}

type ComponentREST = { server: string; ca: string; cert: string; key: string };

/**
 * A packaged component of `keelson server` that runs in the server's process on its own node
 * (k3s' --disable items local-storage, servicelb and coredns), a client with a certificate of its own
 * (system:masters: it works cluster-wide, as the controller manager does): started when the server
 * has its own node and the component is not disabled; with --disable=<component>, `remove` undoes
 * what it made (in the background) and nothing runs. Without a node, nothing is done.
 */
async function packagedComponent(p: {
  /** the client certificate's CN, and the user agent's component */
  user: string;
  agent: string;
  disabled: boolean;
  withNode: boolean;
  server: { server: string; ca: string };
  ca: Parameters<typeof issueClientCert>[0];
  log: Logger;
  remove: (client: RESTClient) => Promise<unknown>;
  removeFailure: string;
  start: (rest: ComponentREST, agent: string) => Promise<{ stop(): Promise<void> } | undefined> | { stop(): Promise<void> };
}): Promise<{ stop(): Promise<void> } | undefined> {
  if (!p.withNode && !p.disabled) return undefined;
  const ck = await issueClientCert(p.ca, p.user, ['system:masters']);
  const rest = { ...p.server, cert: ck.certPEM, key: ck.keyPEM };
  const agent = userAgent(p.agent);
  if (p.disabled) {
    const client = new RESTClient({ ...rest, userAgent: agent });
    void p.remove(client)
      .catch((e) => p.log.error(e, p.removeFailure))
      .finally(() => client.close());
    return undefined;
  }
  return await p.start(rest, agent);
}

/**
 * The local-path provisioner of `keelson server` (controllers/localpath.ts): with
 * --disable=local-storage, the StorageClass it made is deleted.
 */
function localPathProvisioner(o: APIServerOptions, withNode: boolean, dataDir: string, nodeName: string, server: { server: string; ca: string }, ca: Parameters<typeof issueClientCert>[0], log: Logger): Promise<{ stop(): Promise<void> } | undefined> {
  const path = o.defaultLocalStoragePath ? resolve(o.defaultLocalStoragePath) : join(dataDir, 'storage');
  return packagedComponent({
    user: 'keelson-local-path-provisioner',
    agent: 'local-path-provisioner',
    disabled: o.disable.includes(LOCAL_STORAGE_COMPONENT),
    withNode,
    server,
    ca,
    log,
    remove: (client) => removeLocalPathClass(client, log),
    removeFailure: 'Deleting the StorageClass of the local-path provisioner failed',
    start: (rest, agent) => startLocalPathProvisioner({ rest, userAgent: agent, nodeName, path, log }),
  });
}

/**
 * ServiceLB of `keelson server` (controllers/servicelb.ts, k3s' servicelb): with
 * --disable=servicelb, the ingresses it wrote are cleared.
 */
function serviceLBController(o: APIServerOptions, withNode: boolean, nodeName: string, server: { server: string; ca: string }, ca: Parameters<typeof issueClientCert>[0], log: Logger): Promise<{ stop(): Promise<void> } | undefined> {
  return packagedComponent({
    user: 'keelson-servicelb',
    agent: 'servicelb',
    disabled: o.disable.includes(SERVICELB_COMPONENT),
    withNode,
    server,
    ca,
    log,
    remove: (client) => removeServiceLBIngresses(client, log),
    removeFailure: 'Clearing the load-balancer ingresses of ServiceLB failed',
    start: (rest, agent) => startServiceLB({ rest, userAgent: agent, nodeName, log }),
  });
}

/**
 * --encryption-provider-config-automatic-reload: a changed file is loaded again and each
 * resource's new transformer takes over; a file that cannot be used is reported and the
 * configuration in use stays, as kube-apiserver's reload controller does.
 */
/**
 * --tls-cert-file, --tls-private-key-file and --tls-sni-cert-key files are watched, as
 * kube-apiserver's dynamic serving certificates: changed contents are loaded and checked, and
 * new connections get them; contents that cannot be used are reported and the certificates in
 * use stay.
 */
function watchServingCertificates(o: APIServerOptions, server: APIServer, log: Logger): void {
  const files = new Set([o.tlsCertFile, o.tlsPrivateKeyFile, ...o.tlsSNICertKey.flatMap((n) => [n.certFile, n.keyFile])].filter((f) => f !== ''));
  if (!files.size) return;
  let timer: NodeJS.Timeout | undefined;
  const reload = () => {
    try {
      const user = o.tlsCertFile ? loadCertKeyFiles('serving-cert', o.tlsCertFile, o.tlsPrivateKeyFile) : undefined;
      server.reloadServingCertificates({ ...user, sniCertKeys: loadSNICertKeys(o.tlsSNICertKey) });
      log.info('Loaded the serving certificates again', { files: [...files].join(',') });
    } catch (e) {
      log.error(e, 'Failed to load the changed serving certificates; the ones in use stay');
    }
  };
  // a certificate and its key are written one after the other: load once both have settled
  const changed = (cur: { mtimeMs: number; size: number }, prev: { mtimeMs: number; size: number }) => {
    if (cur.mtimeMs === prev.mtimeMs && cur.size === prev.size) return;
    clearTimeout(timer);
    timer = setTimeout(reload, 300);
    timer.unref();
  };
  for (const f of files) watchFile(f, { interval: 1000, persistent: false }, changed);
}

function watchEncryptionConfig(path: string, hash: string, server: APIServer, log: Logger): void {
  let current = hash;
  const check = () => {
    let data: Buffer;
    try {
      data = readFileSync(path);
    } catch (e) {
      log.error(e, 'failed to read the encryption provider configuration file', { path });
      return;
    }
    if (encryptionConfigHash(data) === current) return;
    try {
      const next = loadEncryptionConfig(path);
      applyEncryptionConfig(server.allStores, next);
      current = next.contentHash;
      log.info('Reloaded the encryption provider configuration', { path, resources: next.resources.join(',') });
    } catch (e) {
      log.error(e, 'failed to load the new encryption provider configuration; the previous one stays in use', { path });
    }
  };
  watchFile(path, { interval: 1000, persistent: false }, check);
}

export function apiserverCommand(allInOne: boolean): Command {
  const o = defaults(allInOne);
  const gate = new FeatureGate(APISERVER_FEATURES as any);
  const cmd: Command = new Command({
    use: allInOne ? 'server' : 'apiserver',
    // (kube-apiserver: "stop printing usage when the command errors")
    silenceUsage: true,
    short: allInOne ? 'Run a single-node cluster: the API server on the embedded store' : 'Run the Kubernetes-compatible API server',
    long: allInOne
      ? 'Runs a Keelson cluster on this machine: the API server and the controller manager (the scheduler and the node agent join as they land) in one process, on an embedded SQLite store under --data-dir. The admin kubeconfig is written to <data-dir>/kubeconfig.'
      : 'The Keelson API server validates and configures data for the API objects (pods, services, deployments and the rest) and serves the REST operations that real Kubernetes clients use. It takes kube-apiserver\'s flag names.',
    args: 'none',
    run: async ({ flags }) => {
      await run(o, gate, flags, allInOne);
    },
  });
  declare(cmd, o, gate, allInOne);
  if (!allInOne) {
    // `keelson apiserver` keeps its state beside the working directory unless told otherwise
    const k = cmd.sections.flagSet('keelson');
    k.stringVar(o, 'dataDir', 'data-dir', 'Directory for the database and the generated certificates (Keelson-specific).');
  }
  void existsSync;
  return cmd;
}
