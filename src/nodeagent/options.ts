// The kubelet's options: its configuration file (KubeletConfiguration, kubelet.config.k8s.io/v1beta1),
// the drop-in directory (--config-dir), the command-line-only flags (KubeletFlags), the defaults of
// both, their validation, and what /configz prints.
//
// The behaviour follows kubelet 1.33 (cmd/kubelet/app and pkg/kubelet/apis/config):
//   - Without --config the configuration is the v1beta1 defaults with four "legacy" flag defaults
//     over them (anonymous authentication on, no token webhook, AlwaysAllow, read-only port 10255);
//     with --config the file's defaulting applies (anonymous off, webhook on, Webhook, no read-only
//     port), and a file without evictionHard gets the kubelet's default hard thresholds.
//   - Defaulting is Go's: a pointer field is defaulted when absent, a plain field when zero, so
//     `port: 0` in a file means 10250 while `eventRecordQPS: 0` stays 0.
//   - The file is decoded strictly first; on a strict error (an unknown or duplicated field) the
//     kubelet logs it and decodes leniently. Type errors are fatal.
//   - Relative paths in the --config file are resolved against the file's directory (not in drop-ins).
//   - Drop-ins (`*.conf` under --config-dir, walked in lexical order, subdirectories included) are
//     JSON merge patches over the configuration: structs and maps merge, lists replace; they are
//     not defaulted.
//   - The command line's flags are then parsed again over the result, so that flags win; a map flag
//     replaces the file's map, except --feature-gates, which merges.
//
// Durations are held in milliseconds; the file and /configz carry Go duration strings ("1m0s").
// Property names are the v1beta1 JSON names.
import { readFileSync, readdirSync, lstatSync, statSync, existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve as resolvePath, normalize } from 'node:path';
import { isIP } from 'node:net';
import { yamlModule } from '../codec/yamlmodule.js';
import { FeatureGate, parseGoUint, parseGoInt, parseGoFloat, validateQuantity, type FeatureSpec } from '../cli/flags.js';
import * as klog from '../cli/klog.js';
import { KUBERNETES_VERSION } from '../cli/version.js';
import { goFormatDuration, goJSONSyntaxError, goParseDuration, goQuote, goQuoteList } from '../machinery/gostrings.js';
import { isLabelValue, isQualifiedName } from '../machinery/validation.js';
import { parseQuantity, quantityString } from '../schema/validation/quantity.js';

const yaml = yamlModule;

export const KUBELET_CONFIG_GROUP = 'kubelet.config.k8s.io';
export const KUBELET_CONFIG_API_VERSION = 'kubelet.config.k8s.io/v1beta1';
export const KUBELET_CONFIG_KIND = 'KubeletConfiguration';
/** the name Kubernetes' kubelet config scheme carries in "not registered" errors */
const SCHEME_NAME = 'k8s.io/kubernetes/pkg/kubelet/apis/config/scheme/scheme.go:32';

export const DEFAULT_ROOT_DIR = '/var/lib/kubelet';
export const DEFAULT_CERT_DIR = '/var/lib/kubelet/pki';
export const DEFAULT_VOLUME_PLUGIN_DIR = '/usr/libexec/kubernetes/kubelet-plugins/volume/exec/';
export const DEFAULT_POD_LOGS_DIR = '/var/log/pods';
export const DEFAULT_CONTAINER_RUNTIME_ENDPOINT = 'unix:///run/containerd/containerd.sock';
export const DEFAULT_RESOLV_CONF = '/etc/resolv.conf';
export const KUBELET_PORT = 10250;
export const KUBELET_READ_ONLY_PORT = 10255;
/** the kubelet's hard eviction thresholds when a --config file sets none (Linux) */
export const DEFAULT_EVICTION_HARD: Readonly<Record<string, string>> = {
  'imagefs.available': '15%',
  'imagefs.inodesFree': '5%',
  'memory.available': '100Mi',
  'nodefs.available': '10%',
  'nodefs.inodesFree': '5%',
};

/**
 * The feature gates the kubelet's options consult, with their Kubernetes 1.33 stages, and the
 * logging gates. A daemon's FeatureGate may register more; these are the ones this module reads.
 */
export const KUBELET_FEATURES: Record<string, FeatureSpec> = {
  CPUManagerPolicyAlphaOptions: { default: false, preRelease: 'ALPHA' },
  CPUManagerPolicyBetaOptions: { default: true, preRelease: 'BETA' },
  CustomCPUCFSQuotaPeriod: { default: false, preRelease: 'ALPHA' },
  GracefulNodeShutdown: { default: true, preRelease: 'BETA' },
  GracefulNodeShutdownBasedOnPodPriority: { default: true, preRelease: 'BETA' },
  ImageMaximumGCAge: { default: true, preRelease: 'BETA' },
  InPlacePodVerticalScaling: { default: true, preRelease: 'BETA' },
  KubeletCrashLoopBackOffMax: { default: false, preRelease: 'ALPHA' },
  KubeletEnsureSecretPulledImages: { default: false, preRelease: 'ALPHA' },
  KubeletSeparateDiskGC: { default: true, preRelease: 'BETA' },
  KubeletServiceAccountTokenForCredentialProviders: { default: false, preRelease: 'ALPHA' },
  KubeletTracing: { default: true, preRelease: 'BETA' },
  MemoryQoS: { default: false, preRelease: 'ALPHA' },
  NodeLogQuery: { default: false, preRelease: 'BETA' },
  NodeSwap: { default: true, preRelease: 'BETA' },
  QOSReserved: { default: false, preRelease: 'ALPHA' },
  RecursiveReadOnlyMounts: { default: true, preRelease: 'BETA' },
  RotateKubeletServerCertificate: { default: true, preRelease: 'BETA' },
  SupplementalGroupsPolicy: { default: true, preRelease: 'BETA' },
  TopologyManagerPolicyAlphaOptions: { default: false, preRelease: 'ALPHA' },
  TopologyManagerPolicyBetaOptions: { default: true, preRelease: 'BETA' },
  UserNamespacesSupport: { default: true, preRelease: 'BETA' },
  ...klog.loggingFeatureSpecs,
};

// ─────────────────────────────────────────────────────────────────────────────
// Types
// ─────────────────────────────────────────────────────────────────────────────

/** a taint at registration (--register-with-taints) */
export interface Taint {
  key: string;
  value?: string;
  effect: string;
  /** RFC 3339; the kubelet refuses a registration taint that has one */
  timeAdded?: string;
}

export interface MemoryReservation {
  numaNode: number;
  limits: Record<string, string>;
}

export interface ShutdownGracePeriodByPodPriority {
  priority: number;
  shutdownGracePeriodSeconds: number;
}

export interface VModuleItem {
  filePattern: string;
  verbosity: number;
}

export interface OutputRoutingOptions {
  splitStream: boolean;
  /** a resource quantity ("0", "64Ki") */
  infoBufferSize: string;
}

/** component-base's LoggingConfiguration (logging: in the file) */
export interface LoggingConfiguration {
  format: string;
  /** milliseconds */
  flushFrequency: number;
  verbosity: number;
  vmodule: VModuleItem[];
  options: { text: OutputRoutingOptions; json: OutputRoutingOptions };
}

export interface TracingConfiguration {
  endpoint?: string;
  samplingRatePerMillion?: number;
}

export interface KubeletAuthentication {
  x509: { clientCAFile: string };
  webhook: { enabled: boolean; /** ms */ cacheTTL: number };
  anonymous: { enabled: boolean };
}

export interface KubeletAuthorization {
  /** AlwaysAllow or Webhook */
  mode: string;
  webhook: { /** ms */ cacheAuthorizedTTL: number; /** ms */ cacheUnauthorizedTTL: number };
}

/**
 * KubeletConfiguration, kubelet.config.k8s.io/v1beta1, as the kubelet holds it after defaulting
 * (every field set; durations in milliseconds). Fields that are optional here are those the
 * kubelet keeps as "unset" (nil) even after defaulting.
 */
export interface KubeletConfiguration {
  enableServer: boolean;
  staticPodPath: string;
  podLogsDir: string;
  syncFrequency: number;
  fileCheckFrequency: number;
  httpCheckFrequency: number;
  staticPodURL: string;
  staticPodURLHeader: Record<string, string[]>;
  address: string;
  port: number;
  readOnlyPort: number;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  tlsCipherSuites: string[];
  tlsMinVersion: string;
  rotateCertificates: boolean;
  serverTLSBootstrap: boolean;
  authentication: KubeletAuthentication;
  authorization: KubeletAuthorization;
  registryPullQPS: number;
  registryBurst: number;
  imagePullCredentialsVerificationPolicy: string;
  preloadedImagesVerificationAllowlist: string[];
  eventRecordQPS: number;
  eventBurst: number;
  enableDebuggingHandlers: boolean;
  enableContentionProfiling: boolean;
  healthzPort: number;
  healthzBindAddress: string;
  oomScoreAdj: number;
  clusterDomain: string;
  clusterDNS: string[];
  streamingConnectionIdleTimeout: number;
  nodeStatusUpdateFrequency: number;
  nodeStatusReportFrequency: number;
  nodeLeaseDurationSeconds: number;
  imageMinimumGCAge: number;
  imageMaximumGCAge: number;
  imageGCHighThresholdPercent: number;
  imageGCLowThresholdPercent: number;
  volumeStatsAggPeriod: number;
  kubeletCgroups: string;
  systemCgroups: string;
  cgroupRoot: string;
  cgroupsPerQOS: boolean;
  cgroupDriver: string;
  cpuManagerPolicy: string;
  singleProcessOOMKill?: boolean;
  cpuManagerPolicyOptions: Record<string, string>;
  cpuManagerReconcilePeriod: number;
  memoryManagerPolicy: string;
  topologyManagerPolicy: string;
  topologyManagerScope: string;
  topologyManagerPolicyOptions: Record<string, string>;
  qosReserved: Record<string, string>;
  runtimeRequestTimeout: number;
  hairpinMode: string;
  maxPods: number;
  podCIDR: string;
  podPidsLimit: number;
  resolvConf: string;
  runOnce: boolean;
  cpuCFSQuota: boolean;
  cpuCFSQuotaPeriod: number;
  nodeStatusMaxImages: number;
  maxOpenFiles: number;
  contentType: string;
  kubeAPIQPS: number;
  kubeAPIBurst: number;
  serializeImagePulls: boolean;
  maxParallelImagePulls?: number;
  evictionHard: Record<string, string>;
  evictionSoft: Record<string, string>;
  evictionSoftGracePeriod: Record<string, string>;
  evictionPressureTransitionPeriod: number;
  evictionMaxPodGracePeriod: number;
  evictionMinimumReclaim: Record<string, string>;
  mergeDefaultEvictionSettings: boolean;
  podsPerCore: number;
  enableControllerAttachDetach: boolean;
  protectKernelDefaults: boolean;
  makeIPTablesUtilChains: boolean;
  iptablesMasqueradeBit: number;
  iptablesDropBit: number;
  featureGates: Record<string, boolean>;
  failSwapOn: boolean;
  memorySwap: { swapBehavior: string };
  containerLogMaxSize: string;
  containerLogMaxFiles: number;
  containerLogMaxWorkers: number;
  containerLogMonitorInterval: number;
  configMapAndSecretChangeDetectionStrategy: string;
  systemReserved: Record<string, string>;
  kubeReserved: Record<string, string>;
  reservedSystemCPUs: string;
  showHiddenMetricsForVersion: string;
  systemReservedCgroup: string;
  kubeReservedCgroup: string;
  enforceNodeAllocatable: string[];
  allowedUnsafeSysctls: string[];
  volumePluginDir: string;
  providerID: string;
  kernelMemcgNotification: boolean;
  logging: LoggingConfiguration;
  enableSystemLogHandler: boolean;
  enableSystemLogQuery: boolean;
  shutdownGracePeriod: number;
  shutdownGracePeriodCriticalPods: number;
  shutdownGracePeriodByPodPriority: ShutdownGracePeriodByPodPriority[];
  crashLoopBackOff: { maxContainerRestartPeriod?: number };
  reservedMemory: MemoryReservation[];
  enableProfilingHandler: boolean;
  enableDebugFlagsHandler: boolean;
  seccompDefault: boolean;
  memoryThrottlingFactor?: number;
  registerWithTaints: Taint[];
  registerNode: boolean;
  tracing?: TracingConfiguration;
  localStorageCapacityIsolation: boolean;
  containerRuntimeEndpoint: string;
  imageServiceEndpoint: string;
  failCgroupV1: boolean;
  userNamespaces?: { idsPerPod?: number };
}

/**
 * The kubelet's command-line-only options (cmd/kubelet/app/options KubeletFlags): what cannot be
 * shared between nodes or changed during a node's life. Durations in milliseconds.
 */
export interface KubeletFlags {
  /** --kubeconfig: API server mode when set, standalone mode when empty */
  kubeconfig: string;
  /** --bootstrap-kubeconfig */
  bootstrapKubeconfig: string;
  /** --hostname-override */
  hostnameOverride: string;
  /** --node-ip: one IP or a dual-stack pair, comma-separated */
  nodeIP: string;
  /** --cert-dir */
  certDirectory: string;
  /** --cloud-provider: "" or "external" */
  cloudProvider: string;
  /** --root-dir */
  rootDirectory: string;
  /** --config */
  kubeletConfigFile: string;
  /** --config-dir */
  kubeletDropinConfigDirectory: string;
  /** --experimental-mounter-path (deprecated) */
  experimentalMounterPath: string;
  /** --experimental-allocatable-ignore-eviction (deprecated) */
  experimentalNodeAllocatableIgnoreEvictionThreshold: boolean;
  /** --node-labels */
  nodeLabels: Record<string, string>;
  /** --lock-file */
  lockFilePath: string;
  /** --exit-on-lock-contention */
  exitOnLockContention: boolean;
  /** --minimum-container-ttl-duration (deprecated), ms */
  minimumGCAge: number;
  /** --maximum-dead-containers-per-container (deprecated) */
  maxPerPodContainerCount: number;
  /** --maximum-dead-containers (deprecated) */
  maxContainerCount: number;
  /** --seccomp-default (OR-ed with the configuration's seccompDefault) */
  seccompDefault: boolean;
  /** --runtime-cgroups */
  runtimeCgroups: string;
  /** --pod-infra-container-image (deprecated) */
  podSandboxImage: string;
  /** --image-credential-provider-config */
  imageCredentialProviderConfigPath: string;
  /** --image-credential-provider-bin-dir */
  imageCredentialProviderBinDir: string;
}

/** NewKubeletFlags: the flags' defaults */
export function defaultKubeletFlags(): KubeletFlags {
  return {
    kubeconfig: '',
    bootstrapKubeconfig: '',
    hostnameOverride: '',
    nodeIP: '',
    certDirectory: DEFAULT_CERT_DIR,
    cloudProvider: '',
    rootDirectory: DEFAULT_ROOT_DIR,
    kubeletConfigFile: '',
    kubeletDropinConfigDirectory: '',
    experimentalMounterPath: '',
    experimentalNodeAllocatableIgnoreEvictionThreshold: false,
    nodeLabels: {},
    lockFilePath: '',
    exitOnLockContention: false,
    minimumGCAge: 0,
    maxPerPodContainerCount: 1,
    maxContainerCount: -1,
    seccompDefault: false,
    runtimeCgroups: '',
    podSandboxImage: '',
    imageCredentialProviderConfigPath: '',
    imageCredentialProviderBinDir: '',
  };
}

/** whether RuntimeDefault is the default seccomp profile: --seccomp-default or the file's seccompDefault */
export function effectiveSeccompDefault(c: KubeletConfiguration, f: KubeletFlags): boolean {
  return f.seccompDefault || c.seccompDefault;
}

// ─────────────────────────────────────────────────────────────────────────────
// The v1beta1 schema: one declaration per field drives decoding, zero values, drop-in merging
// and the /configz form
// ─────────────────────────────────────────────────────────────────────────────

type Prim = 'bool' | 'int32' | 'int64' | 'uint32' | 'float64' | 'string' | 'duration' | 'quantity' | 'flushFrequency';
interface StructSpec {
  /** the Go struct's name, as encoding/json names it in type errors */
  struct: string;
  fields: FieldSpec[];
}
type FieldType = Prim | StructSpec | { list: 'string' | StructSpec } | { map: 'string' | 'bool' | 'strings' | 'quantity' };
interface FieldSpec {
  name: string;
  type: FieldType;
  /** the Go type's name in type errors, when not the primitive's */
  go?: string;
  /** a pointer in v1beta1: defaulted when absent (not when zero), printed by /configz */
  ptr?: boolean;
  /** may stay unset after defaulting (a pointer in the kubelet's internal type too) */
  opt?: boolean;
  /** not omitempty: printed by /configz even when zero */
  always?: boolean;
  /** a file path resolved against the --config file's directory */
  path?: boolean;
}

const isStruct = (t: FieldType): t is StructSpec => typeof t === 'object' && 'struct' in t;
const isList = (t: FieldType): t is { list: 'string' | StructSpec } => typeof t === 'object' && 'list' in t;
const isMap = (t: FieldType): t is { map: 'string' | 'bool' | 'strings' | 'quantity' } => typeof t === 'object' && 'map' in t;

const st = (struct: string, fields: FieldSpec[]): StructSpec => ({ struct, fields });
const F = (name: string, type: FieldType, extra: Omit<FieldSpec, 'name' | 'type'> = {}): FieldSpec => ({ name, type, ...extra });
const strs = { list: 'string' as const };
const smap = { map: 'string' as const };

const OUTPUT_ROUTING = (struct: string) => st(struct, [F('splitStream', 'bool'), F('infoBufferSize', 'quantity', { go: 'resource.QuantityValue' })]);

const LOGGING = st('LoggingConfiguration', [
  F('format', 'string'),
  F('flushFrequency', 'flushFrequency', { always: true, go: 'v1.TimeOrMetaDuration' }),
  F('verbosity', 'uint32', { always: true, go: 'v1.VerbosityLevel' }),
  F('vmodule', { list: st('VModuleItem', [F('filePattern', 'string', { always: true }), F('verbosity', 'uint32', { always: true, go: 'v1.VerbosityLevel' })]) }, { go: 'v1.VModuleConfiguration' }),
  F('options', st('FormatOptions', [F('text', OUTPUT_ROUTING('TextOptions'), { go: 'v1.TextOptions' }), F('json', OUTPUT_ROUTING('JSONOptions'), { go: 'v1.JSONOptions' })]), { go: 'v1.FormatOptions' }),
]);

const KUBELET_CONFIGURATION: StructSpec = st('KubeletConfiguration', [
  F('enableServer', 'bool', { ptr: true }),
  F('staticPodPath', 'string', { path: true }),
  F('podLogsDir', 'string', { path: true }),
  F('syncFrequency', 'duration'),
  F('fileCheckFrequency', 'duration'),
  F('httpCheckFrequency', 'duration'),
  F('staticPodURL', 'string'),
  F('staticPodURLHeader', { map: 'strings' }, { go: 'map[string][]string' }),
  F('address', 'string'),
  F('port', 'int32'),
  F('readOnlyPort', 'int32'),
  F('tlsCertFile', 'string', { path: true }),
  F('tlsPrivateKeyFile', 'string', { path: true }),
  F('tlsCipherSuites', strs, { go: '[]string' }),
  F('tlsMinVersion', 'string'),
  F('rotateCertificates', 'bool'),
  F('serverTLSBootstrap', 'bool'),
  F('authentication', st('KubeletAuthentication', [
    F('x509', st('KubeletX509Authentication', [F('clientCAFile', 'string', { path: true })]), { always: true, go: 'v1beta1.KubeletX509Authentication' }),
    F('webhook', st('KubeletWebhookAuthentication', [F('enabled', 'bool', { ptr: true }), F('cacheTTL', 'duration')]), { always: true, go: 'v1beta1.KubeletWebhookAuthentication' }),
    F('anonymous', st('KubeletAnonymousAuthentication', [F('enabled', 'bool', { ptr: true })]), { always: true, go: 'v1beta1.KubeletAnonymousAuthentication' }),
  ]), { always: true, go: 'v1beta1.KubeletAuthentication' }),
  F('authorization', st('KubeletAuthorization', [
    F('mode', 'string', { go: 'v1beta1.KubeletAuthorizationMode' }),
    F('webhook', st('KubeletWebhookAuthorization', [F('cacheAuthorizedTTL', 'duration'), F('cacheUnauthorizedTTL', 'duration')]), { always: true, go: 'v1beta1.KubeletWebhookAuthorization' }),
  ]), { always: true, go: 'v1beta1.KubeletAuthorization' }),
  F('registryPullQPS', 'int32', { ptr: true }),
  F('registryBurst', 'int32'),
  F('imagePullCredentialsVerificationPolicy', 'string', { go: 'v1beta1.ImagePullCredentialsVerificationPolicy' }),
  F('preloadedImagesVerificationAllowlist', strs, { go: '[]string' }),
  F('eventRecordQPS', 'int32', { ptr: true }),
  F('eventBurst', 'int32'),
  F('enableDebuggingHandlers', 'bool', { ptr: true }),
  F('enableContentionProfiling', 'bool'),
  F('healthzPort', 'int32', { ptr: true }),
  F('healthzBindAddress', 'string'),
  F('oomScoreAdj', 'int32', { ptr: true }),
  F('clusterDomain', 'string'),
  F('clusterDNS', strs, { go: '[]string' }),
  F('streamingConnectionIdleTimeout', 'duration'),
  F('nodeStatusUpdateFrequency', 'duration'),
  F('nodeStatusReportFrequency', 'duration'),
  F('nodeLeaseDurationSeconds', 'int32'),
  F('imageMinimumGCAge', 'duration'),
  F('imageMaximumGCAge', 'duration'),
  F('imageGCHighThresholdPercent', 'int32', { ptr: true }),
  F('imageGCLowThresholdPercent', 'int32', { ptr: true }),
  F('volumeStatsAggPeriod', 'duration'),
  F('kubeletCgroups', 'string'),
  F('systemCgroups', 'string'),
  F('cgroupRoot', 'string'),
  F('cgroupsPerQOS', 'bool', { ptr: true }),
  F('cgroupDriver', 'string'),
  F('cpuManagerPolicy', 'string'),
  F('singleProcessOOMKill', 'bool', { ptr: true, opt: true }),
  F('cpuManagerPolicyOptions', smap, { go: 'map[string]string' }),
  F('cpuManagerReconcilePeriod', 'duration'),
  F('memoryManagerPolicy', 'string'),
  F('topologyManagerPolicy', 'string'),
  F('topologyManagerScope', 'string'),
  F('topologyManagerPolicyOptions', smap, { go: 'map[string]string' }),
  F('qosReserved', smap, { go: 'map[string]string' }),
  F('runtimeRequestTimeout', 'duration'),
  F('hairpinMode', 'string'),
  F('maxPods', 'int32'),
  F('podCIDR', 'string'),
  F('podPidsLimit', 'int64', { ptr: true }),
  F('resolvConf', 'string', { ptr: true, path: true }),
  F('runOnce', 'bool'),
  F('cpuCFSQuota', 'bool', { ptr: true }),
  F('cpuCFSQuotaPeriod', 'duration', { ptr: true }),
  F('nodeStatusMaxImages', 'int32', { ptr: true }),
  F('maxOpenFiles', 'int64'),
  F('contentType', 'string'),
  F('kubeAPIQPS', 'int32', { ptr: true }),
  F('kubeAPIBurst', 'int32'),
  F('serializeImagePulls', 'bool', { ptr: true }),
  F('maxParallelImagePulls', 'int32', { ptr: true, opt: true }),
  F('evictionHard', smap, { go: 'map[string]string' }),
  F('evictionSoft', smap, { go: 'map[string]string' }),
  F('evictionSoftGracePeriod', smap, { go: 'map[string]string' }),
  F('evictionPressureTransitionPeriod', 'duration'),
  F('evictionMaxPodGracePeriod', 'int32'),
  F('evictionMinimumReclaim', smap, { go: 'map[string]string' }),
  F('mergeDefaultEvictionSettings', 'bool', { ptr: true }),
  F('podsPerCore', 'int32'),
  F('enableControllerAttachDetach', 'bool', { ptr: true }),
  F('protectKernelDefaults', 'bool'),
  F('makeIPTablesUtilChains', 'bool', { ptr: true }),
  F('iptablesMasqueradeBit', 'int32', { ptr: true }),
  F('iptablesDropBit', 'int32', { ptr: true }),
  F('featureGates', { map: 'bool' }, { go: 'map[string]bool' }),
  F('failSwapOn', 'bool', { ptr: true }),
  F('memorySwap', st('MemorySwapConfiguration', [F('swapBehavior', 'string')]), { go: 'v1beta1.MemorySwapConfiguration' }),
  F('containerLogMaxSize', 'string'),
  F('containerLogMaxFiles', 'int32', { ptr: true }),
  F('containerLogMaxWorkers', 'int32', { ptr: true }),
  F('containerLogMonitorInterval', 'duration', { ptr: true }),
  F('configMapAndSecretChangeDetectionStrategy', 'string', { go: 'v1beta1.ResourceChangeDetectionStrategy' }),
  F('systemReserved', smap, { go: 'map[string]string' }),
  F('kubeReserved', smap, { go: 'map[string]string' }),
  F('reservedSystemCPUs', 'string'),
  F('showHiddenMetricsForVersion', 'string'),
  F('systemReservedCgroup', 'string'),
  F('kubeReservedCgroup', 'string'),
  F('enforceNodeAllocatable', strs, { go: '[]string' }),
  F('allowedUnsafeSysctls', strs, { go: '[]string' }),
  F('volumePluginDir', 'string', { path: true }),
  F('providerID', 'string'),
  F('kernelMemcgNotification', 'bool'),
  F('logging', LOGGING, { go: 'v1.LoggingConfiguration' }),
  F('enableSystemLogHandler', 'bool', { ptr: true }),
  F('enableSystemLogQuery', 'bool', { ptr: true }),
  F('shutdownGracePeriod', 'duration'),
  F('shutdownGracePeriodCriticalPods', 'duration'),
  F('shutdownGracePeriodByPodPriority', { list: st('ShutdownGracePeriodByPodPriority', [F('priority', 'int32', { always: true }), F('shutdownGracePeriodSeconds', 'int64', { always: true })]) }, { go: '[]v1beta1.ShutdownGracePeriodByPodPriority' }),
  F('crashLoopBackOff', st('CrashLoopBackOffConfig', [F('maxContainerRestartPeriod', 'duration', { ptr: true, opt: true })]), { go: 'v1beta1.CrashLoopBackOffConfig' }),
  F('reservedMemory', { list: st('MemoryReservation', [F('numaNode', 'int32', { always: true }), F('limits', { map: 'quantity' }, { always: true, go: 'v1.ResourceList' })]) }, { go: '[]v1beta1.MemoryReservation' }),
  F('enableProfilingHandler', 'bool', { ptr: true }),
  F('enableDebugFlagsHandler', 'bool', { ptr: true }),
  F('seccompDefault', 'bool', { ptr: true }),
  F('memoryThrottlingFactor', 'float64', { ptr: true, opt: true }),
  F('registerWithTaints', { list: st('Taint', [F('key', 'string', { always: true }), F('value', 'string'), F('effect', 'string', { always: true, go: 'v1.TaintEffect' }), F('timeAdded', 'string', { ptr: true, opt: true, go: 'v1.Time' })]) }, { go: '[]v1.Taint' }),
  F('registerNode', 'bool', { ptr: true }),
  F('tracing', st('TracingConfiguration', [F('endpoint', 'string', { ptr: true, opt: true }), F('samplingRatePerMillion', 'int32', { ptr: true, opt: true })]), { ptr: true, opt: true, go: 'v1.TracingConfiguration' }),
  F('localStorageCapacityIsolation', 'bool', { ptr: true }),
  F('containerRuntimeEndpoint', 'string', { always: true }),
  F('imageServiceEndpoint', 'string'),
  F('failCgroupV1', 'bool', { ptr: true }),
  F('userNamespaces', st('UserNamespaces', [F('idsPerPod', 'int64', { ptr: true, opt: true })]), { ptr: true, opt: true, go: 'v1beta1.UserNamespaces' }),
]);

const fieldIndex = new Map<StructSpec, Map<string, FieldSpec>>();
function fieldOf(s: StructSpec, name: string): FieldSpec | undefined {
  let m = fieldIndex.get(s);
  if (!m) fieldIndex.set(s, (m = new Map(s.fields.map((f) => [f.name, f]))));
  return m.get(name);
}

// ── decoding ─────────────────────────────────────────────────────────────────

type Sparse = Record<string, any>;

interface DecodeState {
  /** strict decoding errors (unknown fields) */
  strict: string[];
  /** the first type error (encoding/json reports the first) */
  fatal?: string;
}

function jsonKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function primGo(t: Prim): string {
  switch (t) {
    case 'duration': case 'flushFrequency': return 'v1.Duration';
    case 'quantity': return 'resource.Quantity';
    default: return t;
  }
}

const INT_RANGE: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint32: [0, 2 ** 32 - 1],
};

/**
 * Decodes one value; undefined when it is in error (the error is recorded). `where` is the Go
 * struct and JSON path that encoding/json names in a type error.
 */
function decodeValue(v: unknown, type: FieldType, go: string, where: { struct: string; path: string }, strictPath: string, s: DecodeState): unknown {
  const typeError = (value = jsonKind(v)) => {
    s.fatal ??= `json: cannot unmarshal ${value} into Go struct field ${where.struct}.${where.path} of type ${go}`;
    return undefined;
  };
  if (typeof type === 'string') {
    switch (type) {
      case 'bool':
        return typeof v === 'boolean' ? v : typeError();
      case 'int32': case 'int64': case 'uint32': {
        if (typeof v !== 'number') return typeError();
        const [min, max] = INT_RANGE[type]!;
        if (!Number.isInteger(v) || v < min || v > max) return typeError(`number ${String(v)}`);
        return v;
      }
      case 'float64':
        return typeof v === 'number' ? v : typeError();
      case 'string':
        return typeof v === 'string' ? v : typeError();
      case 'duration':
        // metav1.Duration's UnmarshalJSON: a string for time.ParseDuration
        if (typeof v !== 'string') {
          s.fatal ??= `json: cannot unmarshal ${jsonKind(v)} into Go value of type string`;
          return undefined;
        }
        try {
          return nsToMs(goParseDuration(v));
        } catch (e) {
          s.fatal ??= (e as Error).message;
          return undefined;
        }
      case 'flushFrequency':
        // TimeOrMetaDuration: a duration string, or an integer of nanoseconds
        if (typeof v === 'number' && Number.isInteger(v)) return v / 1e6;
        if (typeof v !== 'string') {
          s.fatal ??= `json: cannot unmarshal ${jsonKind(v)} into Go value of type string`;
          return undefined;
        }
        try {
          return nsToMs(goParseDuration(v));
        } catch (e) {
          s.fatal ??= (e as Error).message;
          return undefined;
        }
      case 'quantity':
        if (typeof v !== 'string' && typeof v !== 'number') {
          s.fatal ??= `json: cannot unmarshal ${jsonKind(v)} into Go value of type string`;
          return undefined;
        }
        try {
          return validateQuantity(String(v));
        } catch (e) {
          s.fatal ??= (e as Error).message;
          return undefined;
        }
    }
  }
  if (isStruct(type)) {
    if (!isObject(v)) return typeError();
    return decodeStruct(v, type, where.path, strictPath, s);
  }
  if (isList(type)) {
    if (!Array.isArray(v)) return typeError();
    const out: unknown[] = [];
    v.forEach((item, i) => {
      if (type.list === 'string') {
        if (item === null) { out.push(''); return; }
        if (typeof item !== 'string') { s.fatal ??= `json: cannot unmarshal ${jsonKind(item)} into Go struct field ${where.struct}.${where.path} of type string`; return; }
        out.push(item);
        return;
      }
      if (item === null) { out.push({}); return; }
      if (!isObject(item)) { s.fatal ??= `json: cannot unmarshal ${jsonKind(item)} into Go struct field ${where.struct}.${where.path} of type ${go.replace(/^\[\]/, '')}`; return; }
      out.push(decodeStruct(item, type.list, where.path, `${strictPath}[${i}]`, s));
    });
    return out;
  }
  if (isMap(type)) {
    if (!isObject(v)) return typeError();
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) {
      switch (type.map) {
        case 'string':
          if (item === null) out[k] = '';
          else if (typeof item === 'string') out[k] = item;
          else s.fatal ??= `json: cannot unmarshal ${jsonKind(item)} into Go struct field ${where.struct}.${where.path} of type string`;
          break;
        case 'bool':
          if (item === null) out[k] = false;
          else if (typeof item === 'boolean') out[k] = item;
          else s.fatal ??= `json: cannot unmarshal ${jsonKind(item)} into Go struct field ${where.struct}.${where.path} of type bool`;
          break;
        case 'strings':
          if (item === null) out[k] = [];
          else if (Array.isArray(item) && item.every((x) => typeof x === 'string' || x === null)) out[k] = item.map((x) => x ?? '');
          else s.fatal ??= `json: cannot unmarshal ${jsonKind(Array.isArray(item) ? item.find((x) => typeof x !== 'string') : item)} into Go struct field ${where.struct}.${where.path} of type ${Array.isArray(item) ? 'string' : '[]string'}`;
          break;
        case 'quantity':
          if (typeof item !== 'string' && typeof item !== 'number') s.fatal ??= `json: cannot unmarshal ${jsonKind(item)} into Go value of type string`;
          else {
            try {
              out[k] = validateQuantity(String(item));
            } catch (e) {
              s.fatal ??= (e as Error).message;
            }
          }
          break;
      }
    }
    return out;
  }
  return undefined;
}

function decodeStruct(raw: Record<string, unknown>, spec: StructSpec, goPath: string, strictPath: string, s: DecodeState): Sparse {
  const out: Sparse = {};
  for (const [k, v] of Object.entries(raw)) {
    const f = fieldOf(spec, k);
    const sp = strictPath ? `${strictPath}.${k}` : k;
    if (!f) {
      s.strict.push(`unknown field ${goQuote(sp)}`);
      continue;
    }
    if (v === null || v === undefined) continue;
    const gp = goPath ? `${goPath}.${k}` : k;
    const go = f.go ?? (typeof f.type === 'string' ? primGo(f.type) : isStruct(f.type) ? f.type.struct : 'object');
    const val = decodeValue(v, f.type, go, { struct: spec.struct, path: gp }, sp, s);
    if (val !== undefined) out[k] = val;
  }
  return out;
}

function nsToMs(ns: bigint): number {
  return Number(ns / 1000000n) + Number(ns % 1000000n) / 1e6;
}

function msToNs(ms: number): bigint {
  const whole = Math.trunc(ms);
  return BigInt(whole) * 1000000n + BigInt(Math.round((ms - whole) * 1e6));
}

/** Go's time.Duration.String() of milliseconds */
export function goDuration(ms: number): string {
  return goFormatDuration(msToNs(ms));
}

// ── reading a document ──────────────────────────────────────────────────────

/** A decode failure, worded as the kubelet words it (without the file-level prefix). */
export class KubeletConfigError extends Error {
  override name = 'KubeletConfigError';
}

interface DecodedDocument {
  /** the fields present, converted (apiVersion and kind removed) */
  fields: Sparse;
  /** strict decoding errors: unknown and duplicated fields */
  strict: string[];
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** duplicate keys of a YAML document's mappings: go-yaml's messages (line numbers) or kjson's (paths) */
function duplicateKeys(doc: import('yaml').Document, text: string, json: boolean): string[] {
  const Y = yaml();
  const out: string[] = [];
  const walk = (node: unknown, path: string) => {
    if (Y.isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = Y.isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const p = path ? `${path}.${key}` : key;
        if (seen.has(key)) {
          const off = Y.isNode(pair.key) && pair.key.range ? pair.key.range[0] : 0;
          out.push(json ? `duplicate field ${goQuote(p)}` : `line ${lineOf(text, off)}: key ${goQuote(key)} already set in map`);
        }
        seen.add(key);
        walk(pair.value, p);
      }
    } else if (Y.isSeq(node)) {
      node.items.forEach((item, i) => walk(item, `${path}[${i}]`));
    }
  };
  walk(doc.contents, '');
  if (json || out.length === 0) return out;
  return [`yaml: unmarshal errors:\n  ${out.join('\n  ')}`];
}

/**
 * Decodes a KubeletConfiguration document (YAML or JSON) as the kubelet's codec does: apiVersion
 * and kind checked, fields converted, unknown and duplicated fields collected as strict errors.
 * Throws KubeletConfigError("failed to decode: ...") for what lenient decoding cannot accept.
 */
function decodeDocument(text: string): DecodedDocument {
  const Y = yaml();
  const isJSON = /^\s*\{/.test(text);
  let doc: import('yaml').Document;
  let raw: unknown;
  if (isJSON) {
    const syntax = goJSONSyntaxError(text);
    if (syntax) throw new KubeletConfigError(`failed to decode: couldn't get version/kind; json parse error: ${syntax}`);
  }
  try {
    // YAML 1.1, as go-yaml reads it (yes/no are booleans), but timestamps and base-60 numbers stay
    // strings, as they do when sigs.k8s.io/yaml converts YAML to JSON
    doc = Y.parseDocument(text, {
      version: '1.1',
      uniqueKeys: false,
      prettyErrors: false,
      customTags: (tags) => tags.filter((t) => typeof t === 'string' || (t.tag !== 'tag:yaml.org,2002:timestamp' && (t as { format?: string }).format !== 'TIME')),
    });
    if (doc.errors.length > 0) {
      const e = doc.errors[0]!;
      const line = e.linePos?.[0]?.line ?? lineOf(text, e.pos[0]);
      throw new KubeletConfigError(`failed to decode: error converting YAML to JSON: yaml: line ${line}: ${e.message.replace(/ at line \d+, column \d+:?[\s\S]*$/, '')}`);
    }
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    if (e instanceof KubeletConfigError) throw e;
    throw new KubeletConfigError(`failed to decode: error converting YAML to JSON: yaml: ${(e as Error).message}`);
  }
  if (!isObject(raw)) {
    const kind = raw === null || raw === undefined ? null : jsonKind(raw);
    if (kind === null) throw new KubeletConfigError(`failed to decode: Object 'Kind' is missing in '${text}'`);
    throw new KubeletConfigError(`failed to decode: couldn't get version/kind; json parse error: json: cannot unmarshal ${kind} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`);
  }
  const { apiVersion, kind, ...fields } = raw;
  for (const [name, v] of [['apiVersion', apiVersion], ['kind', kind]] as const) {
    if (v !== undefined && v !== null && typeof v !== 'string') {
      throw new KubeletConfigError(`failed to decode: couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonKind(v)} into Go struct field .${name} of type string`);
    }
  }
  if (!kind) throw new KubeletConfigError(`failed to decode: Object 'Kind' is missing in '${text}'`);
  if (!apiVersion) throw new KubeletConfigError(`failed to decode: Object 'apiVersion' is missing in '${text}'`);
  if (apiVersion !== KUBELET_CONFIG_API_VERSION || kind !== KUBELET_CONFIG_KIND) {
    throw new KubeletConfigError(`failed to decode: no kind ${goQuote(String(kind))} is registered for version ${goQuote(String(apiVersion))} in scheme ${goQuote(SCHEME_NAME)}`);
  }
  const state: DecodeState = { strict: [] };
  const decoded = decodeStruct(fields, KUBELET_CONFIGURATION, '', '', state);
  if (state.fatal) throw new KubeletConfigError(`failed to decode: ${state.fatal}`);
  const dups = duplicateKeys(doc, text, isJSON);
  return { fields: decoded, strict: [...(isJSON ? [] : dups), ...state.strict, ...(isJSON ? dups : [])] };
}

// ── defaulting (SetDefaults_KubeletConfiguration, v1beta1) ───────────────────

function gateFor(fileGates: Record<string, boolean> | undefined, gate: FeatureGate | undefined): FeatureGate {
  const local = new FeatureGate(gate ? gate.getAll() : KUBELET_FEATURES);
  const base: Record<string, boolean> = {};
  if (gate) for (const name of Object.keys(gate.getAll())) if (gate.explicitlySet(name)) base[name] = gate.enabled(name);
  local.setFromMap({ ...base, ...(fileGates ?? {}) });
  return local;
}

function enabled(g: FeatureGate, name: string): boolean {
  try {
    return g.enabled(name);
  } catch {
    return KUBELET_FEATURES[name]?.default ?? false;
  }
}

/** Applies the v1beta1 defaults to a decoded (sparse) configuration, in place. */
function setDefaults(o: Sparse, gate: FeatureGate | undefined): Sparse {
  let local: FeatureGate;
  try {
    local = gateFor(o.featureGates, gate);
  } catch (e) {
    throw new KubeletConfigError(`failed to merge global and in-flight KubeletConfiguration while setting defaults, error: ${(e as Error).message}`);
  }
  const zero = (v: unknown) => v === undefined || v === 0 || v === '';
  const d = (obj: Sparse, k: string, v: unknown) => { if (zero(obj[k])) obj[k] = v; };
  const p = (obj: Sparse, k: string, v: unknown) => { if (obj[k] === undefined) obj[k] = v; };
  p(o, 'enableServer', true);
  d(o, 'syncFrequency', 60_000);
  d(o, 'fileCheckFrequency', 20_000);
  d(o, 'httpCheckFrequency', 20_000);
  d(o, 'address', '0.0.0.0');
  d(o, 'port', KUBELET_PORT);
  const authn = (o.authentication ??= {});
  const anon = (authn.anonymous ??= {});
  const whAuthn = (authn.webhook ??= {});
  p(anon, 'enabled', false);
  p(whAuthn, 'enabled', true);
  d(whAuthn, 'cacheTTL', 120_000);
  const authz = (o.authorization ??= {});
  d(authz, 'mode', 'Webhook');
  const whAuthz = (authz.webhook ??= {});
  d(whAuthz, 'cacheAuthorizedTTL', 300_000);
  d(whAuthz, 'cacheUnauthorizedTTL', 30_000);
  p(o, 'registryPullQPS', 5);
  d(o, 'registryBurst', 10);
  p(o, 'eventRecordQPS', 50);
  d(o, 'eventBurst', 100);
  p(o, 'enableDebuggingHandlers', true);
  p(o, 'healthzPort', 10248);
  d(o, 'healthzBindAddress', '127.0.0.1');
  p(o, 'oomScoreAdj', -999);
  d(o, 'streamingConnectionIdleTimeout', 4 * 3_600_000);
  if (zero(o.nodeStatusReportFrequency)) o.nodeStatusReportFrequency = zero(o.nodeStatusUpdateFrequency) ? 300_000 : o.nodeStatusUpdateFrequency;
  d(o, 'nodeStatusUpdateFrequency', 10_000);
  d(o, 'nodeLeaseDurationSeconds', 40);
  d(o, 'imageMinimumGCAge', 120_000);
  p(o, 'imageGCHighThresholdPercent', 85);
  p(o, 'imageGCLowThresholdPercent', 80);
  d(o, 'volumeStatsAggPeriod', 60_000);
  p(o, 'cgroupsPerQOS', true);
  d(o, 'cgroupDriver', 'cgroupfs');
  d(o, 'cpuManagerPolicy', 'none');
  d(o, 'cpuManagerReconcilePeriod', 10_000);
  d(o, 'memoryManagerPolicy', 'None');
  d(o, 'topologyManagerPolicy', 'none');
  d(o, 'topologyManagerScope', 'container');
  d(o, 'runtimeRequestTimeout', 120_000);
  d(o, 'hairpinMode', 'promiscuous-bridge');
  d(o, 'maxPods', 110);
  if (o.podPidsLimit === undefined || o.podPidsLimit < 0) o.podPidsLimit = -1;
  p(o, 'resolvConf', DEFAULT_RESOLV_CONF);
  p(o, 'cpuCFSQuota', true);
  p(o, 'cpuCFSQuotaPeriod', 100);
  p(o, 'nodeStatusMaxImages', 50);
  d(o, 'maxOpenFiles', 1_000_000);
  d(o, 'contentType', 'application/vnd.kubernetes.protobuf');
  p(o, 'kubeAPIQPS', 50);
  d(o, 'kubeAPIBurst', 100);
  // serializeImagePulls follows maxParallelImagePulls when only that one is given
  if (o.serializeImagePulls === undefined) o.serializeImagePulls = o.maxParallelImagePulls === undefined || o.maxParallelImagePulls < 2;
  d(o, 'evictionPressureTransitionPeriod', 300_000);
  p(o, 'mergeDefaultEvictionSettings', false);
  p(o, 'enableControllerAttachDetach', true);
  p(o, 'makeIPTablesUtilChains', true);
  p(o, 'iptablesMasqueradeBit', 14);
  p(o, 'iptablesDropBit', 15);
  p(o, 'failSwapOn', true);
  d(o, 'containerLogMaxSize', '10Mi');
  p(o, 'containerLogMaxFiles', 5);
  p(o, 'containerLogMaxWorkers', 1);
  p(o, 'containerLogMonitorInterval', 10_000);
  d(o, 'configMapAndSecretChangeDetectionStrategy', 'Watch');
  p(o, 'enforceNodeAllocatable', ['pods']);
  d(o, 'volumePluginDir', DEFAULT_VOLUME_PLUGIN_DIR);
  setRecommendedLogging((o.logging ??= {}));
  p(o, 'enableSystemLogHandler', true);
  p(o, 'enableProfilingHandler', true);
  p(o, 'enableDebugFlagsHandler', true);
  p(o, 'seccompDefault', false);
  p(o, 'failCgroupV1', false);
  p(o, 'memoryThrottlingFactor', 0.9);
  p(o, 'registerNode', true);
  p(o, 'localStorageCapacityIsolation', true);
  d(o, 'containerRuntimeEndpoint', DEFAULT_CONTAINER_RUNTIME_ENDPOINT);
  d(o, 'podLogsDir', DEFAULT_POD_LOGS_DIR);
  if (enabled(local, 'KubeletCrashLoopBackOffMax')) p((o.crashLoopBackOff ??= {}), 'maxContainerRestartPeriod', 300_000);
  if (enabled(local, 'KubeletEnsureSecretPulledImages')) d(o, 'imagePullCredentialsVerificationPolicy', 'NeverVerifyPreloadedImages');
  return o;
}

/** logsapi.SetRecommendedLoggingConfiguration */
function setRecommendedLogging(l: Sparse): void {
  if (!l.format) l.format = 'text';
  if (!l.flushFrequency) l.flushFrequency = 5_000;
  const opts = (l.options ??= {});
  for (const k of ['text', 'json']) {
    const o = (opts[k] ??= {});
    if (o.infoBufferSize === undefined || o.infoBufferSize === '') o.infoBufferSize = '0';
  }
}

/** Fills every field a sparse configuration lacks with its Go zero value (unset optional fields stay unset). */
function complete(o: Sparse, spec: StructSpec): any {
  const out: Sparse = {};
  for (const f of spec.fields) {
    const v = o[f.name];
    if (v === undefined) {
      if (f.opt) continue;
      out[f.name] = zeroOf(f.type);
    } else out[f.name] = cloneValue(v, f.type);
  }
  return out;
}

function zeroOf(t: FieldType): unknown {
  if (typeof t === 'string') {
    switch (t) {
      case 'bool': return false;
      case 'string': return '';
      case 'quantity': return '0';
      default: return 0;
    }
  }
  if (isStruct(t)) return complete({}, t);
  if (isList(t)) return [];
  return {};
}

function cloneValue(v: any, t: FieldType): any {
  if (typeof t === 'string') return v;
  if (isStruct(t)) return complete(v, t);
  if (isList(t)) return t.list === 'string' ? [...v] : v.map((x: Sparse) => complete(x, t.list as StructSpec));
  if (t.map === 'strings') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, [...(x as string[])]]));
  return { ...v };
}

/** A deep copy of a configuration. */
export function cloneKubeletConfiguration(c: KubeletConfiguration): KubeletConfiguration {
  return complete(c as unknown as Sparse, KUBELET_CONFIGURATION);
}

/**
 * The v1beta1 defaults: what a --config file that sets nothing but apiVersion and kind gives
 * (before the kubelet's default evictionHard, which loadKubeletConfigFile adds). `gate` supplies
 * the feature gates of defaults that depend on one.
 */
export function defaultKubeletConfiguration(gate?: FeatureGate): KubeletConfiguration {
  return complete(setDefaults({}, gate), KUBELET_CONFIGURATION);
}

/**
 * The configuration the command line starts from when there is no --config (NewKubeletConfiguration):
 * the v1beta1 defaults with the four legacy flag defaults over them.
 */
export function defaultFlagKubeletConfiguration(gate?: FeatureGate): KubeletConfiguration {
  const c = defaultKubeletConfiguration(gate);
  c.authentication.anonymous.enabled = true;
  c.authentication.webhook.enabled = false;
  c.authorization.mode = 'AlwaysAllow';
  c.readOnlyPort = KUBELET_READ_ONLY_PORT;
  return c;
}

// ── loading files ───────────────────────────────────────────────────────────

export interface LoadOptions {
  /** the daemon's feature gates (for defaults that depend on one) */
  gate?: FeatureGate;
  /** receives the log lines the kubelet writes while loading (lenient decoding) */
  log?: (msg: string, kv: Record<string, unknown>) => void;
}

function readError(path: string, e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case 'ENOENT': return `open ${path}: no such file or directory`;
    case 'EACCES': return `open ${path}: permission denied`;
    case 'EISDIR': return `read ${path}: is a directory`;
    case 'ENOTDIR': return `open ${path}: not a directory`;
    default: return `open ${path}: ${e.message}`;
  }
}

/** reads and decodes one file as configfiles' fsLoader does (the path made absolute first) */
function readDocument(name: string, o: LoadOptions): DecodedDocument {
  const abs = resolvePath(name);
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch (e) {
    throw new KubeletConfigError(`failed to read kubelet config file ${goQuote(abs)}, error: ${readError(abs, e as NodeJS.ErrnoException)}`);
  }
  if (text.length === 0) throw new KubeletConfigError(`kubelet config file ${goQuote(abs)} was empty`);
  const doc = decodeDocument(text);
  if (doc.strict.length > 0) o.log?.('Using lenient decoding as strict decoding failed', { err: `strict decoding error: ${doc.strict.join(', ')}` });
  return doc;
}

function resolveRelativePaths(o: Sparse, spec: StructSpec, root: string): void {
  for (const f of spec.fields) {
    const v = o[f.name];
    if (v === undefined) continue;
    if (f.path && typeof v === 'string' && v.length > 0 && !isAbsolute(v)) o[f.name] = join(root, v);
    else if (isStruct(f.type) && isObject(v)) resolveRelativePaths(v as Sparse, f.type, root);
  }
}

/**
 * Loads a --config file (loadConfigFile): decoded (YAML or JSON), defaulted, the default hard
 * eviction thresholds added when the file sets none, relative paths resolved against the file's
 * directory. Throws with the kubelet's wording: `failed to load Kubelet config file <name>, error ...`.
 */
export function loadKubeletConfigFile(name: string, o: LoadOptions = {}): KubeletConfiguration {
  try {
    const doc = readDocument(name, o);
    const sparse = setDefaults(doc.fields, o.gate);
    resolveRelativePaths(sparse, KUBELET_CONFIGURATION, dirname(resolvePath(name)));
    if (sparse.evictionHard === undefined) sparse.evictionHard = { ...DEFAULT_EVICTION_HARD };
    return complete(sparse, KUBELET_CONFIGURATION);
  } catch (e) {
    if (e instanceof KubeletConfigError) throw new KubeletConfigError(`failed to load Kubelet config file ${name}, error ${e.message}`);
    throw e;
  }
}

/** the `.conf` files under a drop-in directory, as filepath.WalkDir visits them (lexical order, depth first) */
export function dropinFiles(dir: string): string[] {
  const out: string[] = [];
  let top: import('node:fs').Stats;
  try {
    // (a symbolic link at the root is followed)
    top = statSync(dir);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new KubeletConfigError(err.code === 'ENOENT' ? `lstat ${dir}: no such file or directory` : `lstat ${dir}: ${err.message}`);
  }
  // (WalkDir on a file visits the file alone)
  if (!top.isDirectory()) return dir.endsWith('.conf') ? [dir] : [];
  const walk = (d: string, root: boolean) => {
    let names: string[];
    try {
      names = readdirSync(d).sort();
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      const msg = err.code === 'ENOENT' ? `lstat ${d}: no such file or directory` : err.code === 'ENOTDIR' ? `readdirent ${d}: not a directory` : `open ${d}: ${err.message}`;
      if (root || err.code !== 'ENOENT') throw new KubeletConfigError(msg);
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      let isDir = false;
      try {
        // (WalkDir does not follow symbolic links: a link is an entry, not a directory)
        isDir = lstatSync(p).isDirectory();
      } catch {
        /* gone since the listing */
      }
      if (isDir) walk(p, false);
      else if (n.endsWith('.conf')) out.push(p);
    }
  };
  walk(dir, true);
  return out;
}

function mergeSparse(target: Sparse, patch: Sparse, spec: StructSpec): void {
  for (const [k, v] of Object.entries(patch)) {
    const f = fieldOf(spec, k);
    if (!f || v === undefined) continue;
    if (isStruct(f.type)) {
      if (target[k] === undefined) target[k] = complete({}, f.type);
      mergeSparse(target[k], v, f.type);
    } else if (isMap(f.type)) {
      target[k] = { ...(target[k] ?? {}), ...cloneValue(v, f.type) };
    } else {
      target[k] = cloneValue(v, f.type);
    }
  }
}

/**
 * Merges the drop-ins of `dir` over `config` (mergeKubeletConfigurations): each `.conf` file, in
 * lexical order, is a KubeletConfiguration whose fields replace the configuration's (maps and
 * structs merge, lists replace). Drop-ins are not defaulted and their relative paths stay relative.
 * Throws `failed to walk through kubelet dropin directory "<dir>": ...`.
 */
export function mergeKubeletDropins(config: KubeletConfiguration, dir: string, o: LoadOptions = {}): KubeletConfiguration {
  const merged = cloneKubeletConfiguration(config) as unknown as Sparse;
  try {
    for (const file of dropinFiles(dir)) {
      let doc: DecodedDocument;
      try {
        doc = readDocument(file, o);
      } catch (e) {
        if (e instanceof KubeletConfigError) throw new KubeletConfigError(`failed to load kubelet dropin file, path: ${file}, error: ${e.message}`);
        throw e;
      }
      mergeSparse(merged, doc.fields, KUBELET_CONFIGURATION);
    }
  } catch (e) {
    if (e instanceof KubeletConfigError) throw new KubeletConfigError(`failed to walk through kubelet dropin directory ${goQuote(dir)}: ${e.message}`);
    throw e;
  }
  return merged as unknown as KubeletConfiguration;
}

// ── /configz ────────────────────────────────────────────────────────────────

function toJSONStruct(o: Sparse, spec: StructSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of spec.fields) {
    const v = o[f.name];
    if (v === undefined) continue;
    const t = f.type;
    if (isStruct(t)) {
      out[f.name] = toJSONStruct(v, t);
      continue;
    }
    if (isList(t)) {
      if (!f.always && v.length === 0) continue;
      out[f.name] = t.list === 'string' ? [...v] : v.map((x: Sparse) => toJSONStruct(x, t.list as StructSpec));
      continue;
    }
    if (isMap(t)) {
      const keys = Object.keys(v).sort();
      if (!f.always && keys.length === 0) continue;
      out[f.name] = Object.fromEntries(keys.map((k) => [k, t.map === 'quantity' ? canonicalQuantity(v[k]) : t.map === 'strings' ? [...v[k]] : v[k]]));
      continue;
    }
    switch (t) {
      case 'duration': case 'flushFrequency':
        out[f.name] = goDuration(v);
        continue;
      case 'quantity':
        out[f.name] = canonicalQuantity(v);
        continue;
    }
    // a pointer (set) or a field without omitempty is printed; other zero values are left out
    if (!f.ptr && !f.always && (v === '' || v === 0 || v === false)) continue;
    out[f.name] = v;
  }
  return out;
}

function canonicalQuantity(v: string): string {
  const q = parseQuantity(v);
  return q ? quantityString(q) : v;
}

/** The configuration in its v1beta1 JSON form (Go's field order, omitempty and duration strings), without apiVersion and kind. */
export function kubeletConfigurationToV1beta1(c: KubeletConfiguration): Record<string, unknown> {
  return toJSONStruct(c as unknown as Sparse, KUBELET_CONFIGURATION);
}

/** What the kubelet's /configz serves: `{"kubeletconfig": {...}}`. */
export function configzJSON(c: KubeletConfiguration): { kubeletconfig: Record<string, unknown> } {
  return { kubeletconfig: kubeletConfigurationToV1beta1(c) };
}

// ─────────────────────────────────────────────────────────────────────────────
// Validation
// ─────────────────────────────────────────────────────────────────────────────

/** utilerrors.NewAggregate's text: one message alone, several in brackets */
export function aggregate(errs: readonly string[]): string {
  return errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`;
}

/** Go's %v of a map[string]string */
function goMap(m: Record<string, string>): string {
  return `map[${Object.keys(m).sort().map((k) => `${k}:${m[k]}`).join(' ')}]`;
}

/** Go's %v of a v1.Taint value */
function goTaint(t: Taint): string {
  return `{${t.key} ${t.value ?? ''} ${t.effect} ${t.timeAdded ? t.timeAdded : '<nil>'}}`;
}

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** utiltaints.CheckTaintValidation */
function checkTaint(t: Taint): string | undefined {
  const k = isQualifiedName(t.key);
  if (k.length) return `invalid taint key: ${k.join('; ')}`;
  if (t.value) {
    const v = isLabelValue(t.value);
    if (v.length) return `invalid taint value: ${v.join('; ')}`;
  }
  if (t.effect && !TAINT_EFFECTS.includes(t.effect)) return `invalid taint effect: ${t.effect}, unsupported taint effect`;
  return undefined;
}

/**
 * Parses --register-with-taints (`key=value:Effect,...`) as taints.ParseTaints does for the kubelet:
 * every taint needs an effect, key and effect pairs are unique.
 */
export function parseTaints(spec: string): Taint[] {
  if (spec.length === 0) return [];
  const out: Taint[] = [];
  const seen = new Map<string, Set<string>>();
  for (const s of spec.split(',')) {
    const one = (str: string): Taint => {
      const parts = str.split(':');
      let key: string;
      let value = '';
      let effect = '';
      if (parts.length === 1) key = parts[0]!;
      else if (parts.length === 2) {
        effect = parts[1]!;
        if (!TAINT_EFFECTS.includes(effect)) throw new Error(`invalid taint effect: ${effect}, unsupported taint effect`);
        const kv = parts[0]!.split('=');
        if (kv.length > 2) throw new Error(`invalid taint spec: ${str}`);
        key = kv[0]!;
        if (kv.length === 2) {
          value = kv[1]!;
          const errs = isLabelValue(value);
          if (errs.length) throw new Error(`invalid taint spec: ${str}, ${errs.join('; ')}`);
        }
      } else throw new Error(`invalid taint spec: ${str}`);
      const errs = isQualifiedName(key);
      if (errs.length) throw new Error(`invalid taint spec: ${str}, ${errs.join('; ')}`);
      return value ? { key, value, effect } : { key, effect };
    };
    if (s.endsWith('-')) {
      one(s.slice(0, -1));
      continue;
    }
    const t = one(s);
    if (!t.effect) throw new Error(`invalid taint spec: ${s}`);
    const keys = seen.get(t.effect) ?? new Set<string>();
    if (keys.has(t.key)) throw new Error(`duplicated taints with the same key and effect: ${goTaint(t)}`);
    keys.add(t.key);
    seen.set(t.effect, keys);
    out.push(t);
  }
  return out;
}

/**
 * Parses --reserved-memory (`0:memory=1Gi,hugepages-1M=2Gi;1:memory=2Gi`) as the kubelet's
 * ReservedMemoryVar does.
 */
export function parseReservedMemory(s: string): MemoryReservation[] {
  const out: MemoryReservation[] = [];
  if (s === '') return out;
  for (const reservation of s.split(';')) {
    const parts = reservation.split(':');
    if (parts.length !== 2) throw new Error(`the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], got ${reservation}`);
    let numaNode: number;
    try {
      numaNode = Number(parseGoInt(parts[0]!, 10, 64));
    } catch {
      throw new Error(`failed to convert the NUMA node ID, exptected integer, got ${parts[0]}`);
    }
    const limits: Record<string, string> = {};
    for (const typed of parts[1]!.split(',')) {
      const limit = typed.split('=');
      if (limit.length !== 2) throw new Error(`the reserved limit has incorrect value, expected type=quantatity, got ${typed}`);
      const name = limit[0]!;
      if (name !== 'memory' && !name.startsWith('hugepages-')) throw new Error(`memory type conversion error, unknown type: ${goQuote(name)}`);
      if (!parseQuantity(limit[1]!)) throw new Error(`failed to parse the quantatity, expected quantatity, got ${limit[1]}`);
      limits[name] = limit[1]!;
    }
    out.push({ numaNode, limits });
  }
  return out;
}

/** ReservedMemoryVar's String(): `0:hugepages-1Gi=2Gi,memory=1Gi,...`, sorted */
export function formatReservedMemory(list: readonly MemoryReservation[]): string {
  return list
    .map((r) => `${r.numaNode}:${Object.keys(r.limits).map((k) => `${k}=${canonicalQuantity(r.limits[k]!)}`).sort().join(',')}`)
    .sort()
    .join(',');
}

/** k8s.io/utils/cpuset Parse: `0-3,7`; returns the CPUs */
export function parseCPUSet(s: string): number[] {
  const out = new Set<number>();
  if (s === '') return [];
  const atoi = (x: string) => {
    try {
      return Number(parseGoInt(x, 10, 64));
    } catch {
      throw new Error(`strconv.Atoi: parsing ${goQuote(x)}: ${/^[+-]?\d+$/.test(x) ? 'value out of range' : 'invalid syntax'}`);
    }
  };
  for (const r of s.split(',')) {
    const b = r.split('-');
    if (b.length === 1 || (b.length > 2 && b[0] === '')) {
      out.add(atoi(r));
      continue;
    }
    const dash = r.indexOf('-', r.startsWith('-') ? 1 : 0);
    const start = atoi(r.slice(0, dash));
    const end = atoi(r.slice(dash + 1));
    if (start > end) throw new Error(`invalid range ${goQuote(r)} (${start} > ${end})`);
    for (let e = start; e <= end; e++) out.add(e);
  }
  return [...out].sort((a, b) => a - b);
}

export function cgroupV1Host(): boolean {
  // libcontainer's IsCgroup2UnifiedMode: a cgroup2 file system at /sys/fs/cgroup
  return !existsSync('/sys/fs/cgroup/cgroup.controllers');
}

export interface ValidateOptions {
  /** whether the host runs cgroup v1 (detected when not given) */
  cgroupV1?: boolean;
}

/**
 * ValidateKubeletConfiguration: the kubelet's checks of the configuration, with its messages
 * (`invalid configuration: ...`), in its order. `gate` is the daemon's feature gate; the
 * configuration's featureGates are applied over it, as the kubelet does.
 */
export function validateKubeletConfiguration(kc: KubeletConfiguration, gate?: FeatureGate, o: ValidateOptions = {}): string[] {
  let fg: FeatureGate;
  try {
    fg = gateFor(kc.featureGates, gate);
  } catch (e) {
    return [(e as Error).message];
  }
  const errs: string[] = fg.validate();
  const on = (name: string) => enabled(fg, name);
  const E = (msg: string) => errs.push(`invalid configuration: ${msg}`);
  const inRange = (v: number, lo: number, hi: number) => v >= lo && v <= hi;
  const port = (v: number) => inRange(v, 1, 65535);

  if (kc.nodeLeaseDurationSeconds <= 0) E('nodeLeaseDurationSeconds must be greater than 0');
  if (kc.systemCgroups !== '' && kc.cgroupRoot === '') E('systemCgroups (--system-cgroups) was specified and cgroupRoot (--cgroup-root) was not specified');
  if (kc.eventBurst < 0) E(`eventBurst (--event-burst) ${kc.eventBurst} must not be a negative number`);
  if (kc.eventRecordQPS < 0) E(`eventRecordQPS (--event-qps) ${kc.eventRecordQPS} must not be a negative number`);
  if (kc.healthzPort !== 0 && !port(kc.healthzPort)) E(`healthzPort (--healthz-port) ${kc.healthzPort} must be between 1 and 65535, inclusive`);
  if (!on('CustomCPUCFSQuotaPeriod') && kc.cpuCFSQuotaPeriod !== 100) E(`cpuCFSQuotaPeriod (--cpu-cfs-quota-period) ${goDuration(kc.cpuCFSQuotaPeriod)} requires feature gate CustomCPUCFSQuotaPeriod`);
  if (on('CustomCPUCFSQuotaPeriod') && !inRange(kc.cpuCFSQuotaPeriod, 1, 1000)) E(`cpuCFSQuotaPeriod (--cpu-cfs-quota-period) ${goDuration(kc.cpuCFSQuotaPeriod)} must be between 1ms and 1sec, inclusive`);
  if (!inRange(kc.imageGCHighThresholdPercent, 0, 100)) E(`imageGCHighThresholdPercent (--image-gc-high-threshold) ${kc.imageGCHighThresholdPercent} must be between 0 and 100, inclusive`);
  if (!inRange(kc.imageGCLowThresholdPercent, 0, 100)) E(`imageGCLowThresholdPercent (--image-gc-low-threshold) ${kc.imageGCLowThresholdPercent} must be between 0 and 100, inclusive`);
  if (kc.imageGCLowThresholdPercent >= kc.imageGCHighThresholdPercent) E(`imageGCLowThresholdPercent (--image-gc-low-threshold) ${kc.imageGCLowThresholdPercent} must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) ${kc.imageGCHighThresholdPercent}`);
  if (kc.imageMaximumGCAge !== 0 && !on('ImageMaximumGCAge')) E('ImageMaximumGCAge feature gate is required for Kubelet configuration option imageMaximumGCAge');
  if (kc.imageMinimumGCAge < 0) E(`imageMinimumGCAge ${goDuration(kc.imageMinimumGCAge)} must not be negative`);
  if (kc.imageMaximumGCAge < 0) E(`imageMaximumGCAge ${goDuration(kc.imageMaximumGCAge)} must not be negative`);
  if (kc.imageMaximumGCAge > 0 && kc.imageMaximumGCAge <= kc.imageMinimumGCAge) E(`imageMaximumGCAge ${goDuration(kc.imageMaximumGCAge)} must be greater than imageMinimumGCAge ${goDuration(kc.imageMinimumGCAge)}`);
  if (!inRange(kc.iptablesDropBit, 0, 31)) E(`iptablesDropBit (--iptables-drop-bit) ${kc.iptablesDropBit} must be between 0 and 31, inclusive`);
  if (!inRange(kc.iptablesMasqueradeBit, 0, 31)) E(`iptablesMasqueradeBit (--iptables-masquerade-bit) ${kc.iptablesMasqueradeBit} must be between 0 and 31, inclusive`);
  if (kc.kubeAPIBurst < 0) E(`kubeAPIBurst (--kube-api-burst) ${kc.kubeAPIBurst} must not be a negative number`);
  if (kc.kubeAPIQPS < 0) E(`kubeAPIQPS (--kube-api-qps) ${kc.kubeAPIQPS} must not be a negative number`);
  if (kc.nodeStatusMaxImages < -1) E(`nodeStatusMaxImages (--node-status-max-images) ${kc.nodeStatusMaxImages} must be -1 or greater`);
  if (kc.maxOpenFiles < 0) E(`maxOpenFiles (--max-open-files) ${kc.maxOpenFiles} must not be a negative number`);
  if (kc.maxPods < 0) E(`maxPods (--max-pods) ${kc.maxPods} must not be a negative number`);
  if (!inRange(kc.oomScoreAdj, -1000, 1000)) E(`oomScoreAdj (--oom-score-adj) ${kc.oomScoreAdj} must be between -1000 and 1000, inclusive`);
  if (kc.podsPerCore < 0) E(`podsPerCore (--pods-per-core) ${kc.podsPerCore} must not be a negative number`);
  if (!port(kc.port)) E(`port (--port) ${kc.port} must be between 1 and 65535, inclusive`);
  if (kc.readOnlyPort !== 0 && !port(kc.readOnlyPort)) E(`readOnlyPort (--read-only-port) ${kc.readOnlyPort} must be between 0 and 65535, inclusive`);
  if (kc.registryBurst < 0) E(`registryBurst (--registry-burst) ${kc.registryBurst} must not be a negative number`);
  if (kc.registryPullQPS < 0) E(`registryPullQPS (--registry-qps) ${kc.registryPullQPS} must not be a negative number`);
  if (kc.maxParallelImagePulls !== undefined && kc.maxParallelImagePulls < 1) E(`maxParallelImagePulls ${kc.maxParallelImagePulls} must be a positive number`);
  if (kc.serializeImagePulls && kc.maxParallelImagePulls !== undefined && kc.maxParallelImagePulls > 1) E('maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false');
  if (kc.serverTLSBootstrap && !on('RotateKubeletServerCertificate')) E(`serverTLSBootstrap ${kc.serverTLSBootstrap} requires feature gate RotateKubeletServerCertificate`);

  for (const t of kc.registerWithTaints) {
    if (checkTaint(t)) errs.push(`invalid taint: ${goTaint(t)}`);
    if (t.timeAdded) E('taint.TimeAdded is not nil');
  }

  const TOPOLOGY = ['none', 'best-effort', 'restricted', 'single-numa-node'];
  if (!TOPOLOGY.includes(kc.topologyManagerPolicy)) E(`topologyManagerPolicy (--topology-manager-policy) ${goQuote(kc.topologyManagerPolicy)} must be one of: ${goQuoteList(TOPOLOGY)}`);
  if (kc.topologyManagerScope !== 'container' && kc.topologyManagerScope !== 'pod') E(`topologyManagerScope (--topology-manager-scope) ${goQuote(kc.topologyManagerScope)} must be one of: "container", or "pod"`);

  if (on('GracefulNodeShutdown')) {
    if (kc.shutdownGracePeriodCriticalPods > kc.shutdownGracePeriod) E(`shutdownGracePeriodCriticalPods ${goDuration(kc.shutdownGracePeriodCriticalPods)} must be <= shutdownGracePeriod ${goDuration(kc.shutdownGracePeriod)}`);
    if (kc.shutdownGracePeriod < 0 || (kc.shutdownGracePeriod > 0 && kc.shutdownGracePeriod < 1000)) E(`shutdownGracePeriod ${goDuration(kc.shutdownGracePeriod)} must be either zero or otherwise >= 1 sec`);
    if (kc.shutdownGracePeriodCriticalPods < 0 || (kc.shutdownGracePeriodCriticalPods > 0 && kc.shutdownGracePeriodCriticalPods < 1000)) E(`shutdownGracePeriodCriticalPods ${goDuration(kc.shutdownGracePeriodCriticalPods)} must be either zero or otherwise >= 1 sec`);
  }
  if ((kc.shutdownGracePeriod > 0 || kc.shutdownGracePeriodCriticalPods > 0) && !on('GracefulNodeShutdown')) E('specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires feature gate GracefulNodeShutdown');
  if (on('GracefulNodeShutdownBasedOnPodPriority')) {
    if (kc.shutdownGracePeriodByPodPriority.length !== 0 && (kc.shutdownGracePeriod > 0 || kc.shutdownGracePeriodCriticalPods > 0)) E('Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time');
  } else if (kc.shutdownGracePeriodByPodPriority.length !== 0) E('Specifying shutdownGracePeriodByPodPriority requires feature gate GracefulNodeShutdownBasedOnPodPriority');
  if (on('NodeSwap')) {
    if (!['', 'NoSwap', 'LimitedSwap'].includes(kc.memorySwap.swapBehavior)) E(`memorySwap.swapBehavior ${goQuote(kc.memorySwap.swapBehavior)} must be one of: "", "LimitedSwap" or "NoSwap"`);
  } else if (kc.memorySwap.swapBehavior !== '') E('memorySwap.swapBehavior cannot be set when NodeSwap feature flag is disabled');

  const maxRestart = kc.crashLoopBackOff.maxContainerRestartPeriod;
  if (on('KubeletCrashLoopBackOffMax')) {
    if (maxRestart === undefined) E('FeatureGate KubeletCrashLoopBackOffMax is enabled, CrashLoopBackOff.MaxContainerRestartPeriod must be set');
    else if (!inRange(Math.trunc(maxRestart), 1000, 300_000)) E(`CrashLoopBackOff.MaxContainerRestartPeriod (got: ${maxRestart / 1000} seconds) must be set between 1s and 300s`);
  } else if (maxRestart !== undefined) E('FeatureGate KubeletCrashLoopBackOffMax not enabled, CrashLoopBackOff.MaxContainerRestartPeriod must not be set');

  const enforce = kc.enforceNodeAllocatable;
  const has = (k: string) => enforce.includes(k);
  if (has('system-reserved-compressible') && has('system-reserved')) E('both "system-reserved" and "system-reserved-compressible" cannot be specified together in enforceNodeAllocatable (--enforce-node-allocatable)');
  if (has('kube-reserved-compressible') && has('kube-reserved')) E('both "kube-reserved" and "kube-reserved-compressible" cannot be specified together in enforceNodeAllocatable (--enforce-node-allocatable)');
  const unique = new Set<string>();
  for (const val of enforce) {
    if (unique.has(val)) {
      E(`duplicated enforcements ${goQuote(val)} in enforceNodeAllocatable (--enforce-node-allocatable)`);
      continue;
    }
    unique.add(val);
    switch (val) {
      case 'pods':
        break;
      case 'system-reserved': case 'system-reserved-compressible':
        if (kc.systemReservedCgroup === '') E('systemReservedCgroup (--system-reserved-cgroup) must be specified when "system-reserved" or "system-reserved-compressible" included in enforceNodeAllocatable (--enforce-node-allocatable)');
        break;
      case 'kube-reserved': case 'kube-reserved-compressible':
        if (kc.kubeReservedCgroup === '') E('kubeReservedCgroup (--kube-reserved-cgroup) must be specified when "kube-reserved" or "kube-reserved-compressible" included in enforceNodeAllocatable (--enforce-node-allocatable)');
        break;
      case 'none':
        if (enforce.length > 1) E('enforceNodeAllocatable (--enforce-node-allocatable) may not contain additional enforcements when "none" is specified');
        continue;
      default:
        E(`option ${goQuote(val)} specified for enforceNodeAllocatable (--enforce-node-allocatable). Valid options are "pods", "system-reserved", "system-reserved-compressible", "kube-reserved", "kube-reserved-compressible" or "none"`);
        continue;
    }
    if (!kc.cgroupsPerQOS) E(`cgroupsPerQOS (--cgroups-per-qos) must be set to true when ${goQuote(val)} contained in enforceNodeAllocatable (--enforce-node-allocatable)`);
  }
  if (!['none', 'hairpin-veth', 'promiscuous-bridge'].includes(kc.hairpinMode)) E(`option ${goQuote(kc.hairpinMode)} specified for hairpinMode (--hairpin-mode). Valid options are "none", "hairpin-veth" or "promiscuous-bridge"`);

  const POLICIES = ['NeverVerify', 'NeverVerifyPreloadedImages', 'NeverVerifyAllowlistedImages', 'AlwaysVerify'];
  if (on('KubeletEnsureSecretPulledImages')) {
    if (!POLICIES.includes(kc.imagePullCredentialsVerificationPolicy)) E(`option ${goQuote(kc.imagePullCredentialsVerificationPolicy)} specified for imagePullCredentialsVerificationPolicy. Valid options are "NeverVerify", "NeverVerifyPreloadedImages", "NeverVerifyAllowlistedImages" or "AlwaysVerify"`);
    if (kc.preloadedImagesVerificationAllowlist.length > 0 && kc.imagePullCredentialsVerificationPolicy !== 'NeverVerifyAllowlistedImages') E("can't set `preloadedImagesVerificationAllowlist` if `imagePullCredentialsVertificationPolicy` is not \"NeverVerifyAllowlistedImages\"");
  } else {
    if (kc.imagePullCredentialsVerificationPolicy.length > 0) E('`imagePullCredentialsVerificationPolicy` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled');
    if (kc.preloadedImagesVerificationAllowlist.length > 0) E('`preloadedImagesVerificationAllowlist` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled');
  }

  if (kc.reservedSystemCPUs !== '') {
    if (kc.systemReservedCgroup !== '' || kc.kubeReservedCgroup !== '') E("can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)");
    try {
      parseCPUSet(kc.reservedSystemCPUs);
    } catch (e) {
      E(`unable to parse reservedSystemCPUs (--reserved-cpus) ${kc.reservedSystemCPUs}, error: ${(e as Error).message}`);
    }
  }

  // validateReservedMemoryConfiguration
  const dup = new Map<number, Set<string>>();
  for (const r of kc.reservedMemory) {
    const seen = dup.get(r.numaNode) ?? new Set<string>();
    dup.set(r.numaNode, seen);
    for (const [name, q] of Object.entries(r.limits)) {
      if (name !== 'memory' && !name.startsWith('hugepages-')) E(`the limit type ${goQuote(name)} for NUMA node ${r.numaNode} is not supported, only [memory hugepages-<HugePageSize>] is accepted`);
      const parsed = parseQuantity(q);
      if (!parsed || parsed.nano === 0n) E(`reserved memory may not be zero for NUMA node ${r.numaNode} and resource ${goQuote(name)}`);
      if (seen.has(name)) E(`the reserved memory has a duplicate value for NUMA node ${r.numaNode} and resource ${goQuote(name)}`);
      seen.add(name);
    }
  }

  // validateKubeletOSConfiguration (Linux): its first error only
  const v1 = o.cgroupV1 ?? cgroupV1Host();
  const ids = kc.userNamespaces?.idsPerPod;
  const osErr =
    kc.failCgroupV1 && v1 ? 'kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is in maintenance mode'
    : v1 && kc.singleProcessOOMKill === false ? 'invalid configuration: singleProcessOOMKill must not be explicitly set to false when using cgroup v1'
    : ids !== undefined && ids < 65536 ? 'invalid configuration: userNamespaces.idsPerPod must not be less than 65536'
    : ids !== undefined && ids % 65536 !== 0 ? 'invalid configuration: userNamespaces.idsPerPod must be a multiple of 65536'
    : ids !== undefined && ids > 2 ** 32 - 1 ? 'invalid configuration: userNamespaces.idsPerPod must not be more than 4294967295'
    : undefined;
  if (osErr) errs.push(osErr);

  const hidden = validateShowHiddenMetricsVersion(kc.showHiddenMetricsForVersion);
  if (hidden) errs.push(hidden);

  errs.push(...validateLoggingConfiguration(kc.logging, fg));

  if (kc.tracing) {
    if (!on('KubeletTracing')) E('tracing should not be configured if KubeletTracing feature flag is disabled.');
    else {
      const rate = kc.tracing.samplingRatePerMillion;
      if (rate !== undefined && rate < 0) errs.push(`tracing.samplingRatePerMillion: Invalid value: ${rate}: sampling rate must be positive`);
      if (rate !== undefined && rate > 1_000_000) errs.push(`tracing.samplingRatePerMillion: Invalid value: ${rate}: sampling rate per million must be less than or equal to one million`);
    }
  }

  if (on('MemoryQoS') && kc.memoryThrottlingFactor === undefined) E('memoryThrottlingFactor is required when MemoryQoS feature flag is enabled');
  if (kc.memoryThrottlingFactor !== undefined && (kc.memoryThrottlingFactor <= 0 || kc.memoryThrottlingFactor > 1.0)) E(`memoryThrottlingFactor ${kc.memoryThrottlingFactor} must be greater than 0 and less than or equal to 1.0`);
  if (kc.containerRuntimeEndpoint === '') E('the containerRuntimeEndpoint was not specified or empty');
  if (kc.enableSystemLogQuery && !on('NodeLogQuery')) E('NodeLogQuery feature gate is required for enableSystemLogQuery');
  if (kc.enableSystemLogQuery && !kc.enableSystemLogHandler) E('enableSystemLogHandler is required for enableSystemLogQuery');
  if (kc.containerLogMaxWorkers < 1) E('containerLogMaxWorkers must be greater than or equal to 1');
  if (kc.containerLogMonitorInterval < 3000) E('containerLogMonitorInterval must be a positive time duration greater than or equal to 3s');
  if (kc.containerLogMaxFiles <= 1) E('containerLogMaxFiles must be greater than 1');
  if (kc.podLogsDir === '') E('podLogsDir was not specified');
  if (!isAbsolute(kc.podLogsDir)) E(`pod logs path ${goQuote(kc.podLogsDir)} must be absolute path`);
  if (kc.podLogsDir !== '' && normalize(kc.podLogsDir).replace(/(.)\/$/, '$1') !== kc.podLogsDir) E(`pod logs path ${goQuote(kc.podLogsDir)} must be normalized`);
  if (/[^\x00-\x7f]/.test(kc.podLogsDir)) E(`pod logs path ${goQuote(kc.podLogsDir)} mut contains ASCII characters only`);
  return errs;
}

/** metrics.ValidateShowHiddenMetricsVersion: only the previous minor version */
function validateShowHiddenMetricsVersion(v: string): string | undefined {
  if (v === '') return undefined;
  const [major, minor] = KUBERNETES_VERSION.split('.').map(Number);
  const valid = `${major}.${minor! - 1}`;
  if (v !== valid) return `--show-hidden-metrics-for-version must be omitted or have the value '${valid}'. Only the previous minor version is allowed`;
  return undefined;
}

/**
 * logsapi.Validate of the `logging` section (field paths under `path`). Keelson writes the text
 * format only.
 */
export function validateLoggingConfiguration(l: LoggingConfiguration, gate?: FeatureGate, path = 'logging'): string[] {
  const errs: string[] = [];
  const on = (name: string) => (gate ? enabled(gate, name) : (KUBELET_FEATURES[name]?.default ?? false));
  if (l.format !== 'text' && l.format !== '') errs.push(`${path}.format: Invalid value: ${goQuote(l.format)}: Unsupported log format`);
  const MAX = 2147483647;
  if (l.verbosity > MAX) errs.push(`${path}.verbosity: Invalid value: ${l.verbosity}: Must be <= ${MAX}`);
  if (l.vmodule.length > 0 && l.format !== '' && l.format !== 'text') errs.push(`${path}.vmodule: Forbidden: Only supported for text log format`);
  l.vmodule.forEach((item, i) => {
    if (item.filePattern === '') errs.push(`${path}.vmodule[${i}]: Required value: File pattern must not be empty`);
    if (/[=,]/.test(item.filePattern)) errs.push(`${path}.vmodule[${i}]: Invalid value: ${goQuote(item.filePattern)}: File pattern must not contain equal sign or comma`);
    if (item.verbosity > MAX) errs.push(`${path}.vmodule[${i}]: Invalid value: ${item.verbosity}: Must be <= ${MAX}`);
  });
  const zeroSize = (q: string) => {
    const p = parseQuantity(q);
    return !p || p.nano === 0n;
  };
  if (!on('LoggingAlphaOptions')) {
    if (l.options.text.splitStream) errs.push(`${path}.options.text.splitStream: Forbidden: Feature LoggingAlphaOptions is disabled`);
    if (!zeroSize(l.options.text.infoBufferSize)) errs.push(`${path}.options.text.infoBufferSize: Forbidden: Feature LoggingAlphaOptions is disabled`);
  }
  if (!on('LoggingBetaOptions')) {
    if (l.options.json.splitStream) errs.push(`${path}.options.json.splitStream: Forbidden: Feature LoggingBetaOptions is disabled`);
    if (!zeroSize(l.options.json.infoBufferSize)) errs.push(`${path}.options.json.infoBufferSize: Forbidden: Feature LoggingBetaOptions is disabled`);
  }
  return errs;
}

/**
 * logsapi.ValidateAndApplyAsField for the kubelet: checks the `logging` section and, when valid,
 * makes klog log as it says. Returns the errors (the kubelet reports them as `initialize logging: ...`).
 */
export function applyLoggingConfiguration(l: LoggingConfiguration, gate?: FeatureGate): string[] {
  const errs = validateLoggingConfiguration(l, gate);
  if (errs.length > 0) return errs;
  klog.configure({
    format: l.format || 'text',
    verbosity: l.verbosity,
    vmodule: l.vmodule.map((v) => ({ filePattern: v.filePattern, verbosity: v.verbosity })),
    flushFrequency: l.flushFrequency,
    splitStream: l.options.text.splitStream,
    infoBufferSize: l.options.text.infoBufferSize,
  });
  return [];
}

// ── the flags ────────────────────────────────────────────────────────────────

/** the label keys a kubelet may set on its Node in the kubernetes.io namespaces (KubeletLabels) */
export const KUBELET_LABELS: readonly string[] = [
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/instance-type',
  'beta.kubernetes.io/os',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'kubernetes.io/arch',
  'kubernetes.io/hostname',
  'kubernetes.io/os',
  'node.kubernetes.io/instance-type',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
];
/** the label namespaces a kubelet may use on its Node (KubeletLabelNamespaces) */
export const KUBELET_LABEL_NAMESPACES: readonly string[] = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

function labelNamespace(key: string): string {
  const i = key.indexOf('/');
  return i < 0 ? '' : key.slice(0, i);
}

/** whether a label key is in the kubernetes.io or k8s.io namespaces */
export function isKubernetesLabel(key: string): boolean {
  const ns = labelNamespace(key);
  return ns === 'kubernetes.io' || ns.endsWith('.kubernetes.io') || ns === 'k8s.io' || ns.endsWith('.k8s.io');
}

/** IsKubeletLabel: a label a kubelet may set on its own Node */
export function isKubeletLabel(key: string): boolean {
  if (KUBELET_LABELS.includes(key)) return true;
  const ns = labelNamespace(key);
  return KUBELET_LABEL_NAMESPACES.some((allowed) => ns === allowed || ns.endsWith('.' + allowed));
}

/** ValidateKubeletFlags: the node labels (the kubelet stops at the first of its two checks). */
export function validateKubeletFlags(f: KubeletFlags): string[] {
  const unknown: string[] = [];
  const invalid = new Map<string, string[]>();
  const add = (k: string, errs: string[]) => {
    if (errs.length) invalid.set(k, [...(invalid.get(k) ?? []), ...errs]);
  };
  for (const [k, v] of Object.entries(f.nodeLabels)) {
    if (isKubernetesLabel(k) && !isKubeletLabel(k)) unknown.push(k);
    add(k, isQualifiedName(k));
    add(v, isLabelValue(v));
  }
  if (unknown.length > 0) {
    return [
      `unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [${[...new Set(unknown)].sort().join(' ')}]\n` +
        `--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (${KUBELET_LABEL_NAMESPACES.join(', ')}) or be in the specifically allowed set (${KUBELET_LABELS.join(', ')})`,
    ];
  }
  if (invalid.size > 0) {
    return [`invalid node labels: ${[...invalid.keys()].sort().map((k) => `'${k}' - ${invalid.get(k)!.join(', ')}`).join('; ')}`];
  }
  return [];
}

// ── the kubelet's start-up checks (run, RunKubelet, NewMainKubelet) ───────────

/**
 * nodeutil.ParseNodeIPArgument for --node-ip: up to two comma-separated IPs of different families;
 * unparsable entries are ignored (and returned in `invalid`). Throws `bad --node-ip ...`.
 */
export function parseNodeIPs(nodeIP: string): { ips: string[]; invalid: string[] } {
  const ips: string[] = [];
  const invalid: string[] = [];
  if (nodeIP !== '') {
    for (const raw of nodeIP.split(',')) {
      const ip = raw.trim();
      if (isIP(ip)) ips.push(ip);
      else invalid.push(ip);
    }
  }
  const bad = (why: string) => new Error(`bad --node-ip ${goQuote(nodeIP)}: ${why}`);
  if (ips.length > 2 || (ips.length === 2 && isIP(ips[0]!) === isIP(ips[1]!))) throw bad('must contain either a single IP or a dual-stack pair of IPs');
  if (ips.length === 2 && ips.some((ip) => ip === '0.0.0.0' || ip === '::')) throw bad("dual-stack node IP cannot include '0.0.0.0' or '::'");
  return { ips, invalid };
}

export interface EvictionThreshold {
  signal: string;
  operator: 'LessThan';
  value: { quantity?: string; percentage?: number };
  /** ms; soft thresholds only */
  gracePeriod: number;
  minReclaim?: { quantity?: string; percentage?: number };
}

export const EVICTION_SIGNALS: readonly string[] = [
  'memory.available', 'allocatableMemory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available',
  'imagefs.inodesFree', 'containerfs.available', 'containerfs.inodesFree', 'pid.available',
];

function parsePercentage(v: string): number {
  try {
    return Math.fround(parseGoFloat(v.replace(/%+$/, ''))) / 100;
  } catch (e) {
    throw new Error((e as Error).message);
  }
}

/**
 * eviction.ParseThresholdConfig: the hard and soft thresholds (with grace periods and minimum
 * reclaims). Throws the kubelet's errors (`unsupported eviction signal x`, ...).
 */
export function parseEvictionThresholds(c: Pick<KubeletConfiguration, 'evictionHard' | 'evictionSoft' | 'evictionSoftGracePeriod' | 'evictionMinimumReclaim'>): EvictionThreshold[] {
  const statement = (signal: string, val: string): EvictionThreshold | undefined => {
    if (!EVICTION_SIGNALS.includes(signal)) throw new Error(`unsupported eviction signal ${signal}`);
    if (val.endsWith('%')) {
      if (val === '0%' || val === '100%') return undefined;
      const p = parsePercentage(val);
      if (p < 0) throw new Error(`eviction percentage threshold ${signal} must be >= 0%: ${val}`);
      if (p > 1) throw new Error(`eviction percentage threshold ${signal} must be <= 100%: ${val}`);
      return { signal, operator: 'LessThan', value: { percentage: p }, gracePeriod: 0 };
    }
    validateQuantity(val);
    const q = parseQuantity(val.trim());
    if (!q || q.nano <= 0n) throw new Error(`eviction threshold ${signal} must be positive: ${q ? quantityString(q) : val}`);
    return { signal, operator: 'LessThan', value: { quantity: quantityString(q) }, gracePeriod: 0 };
  };
  const statements = (m: Record<string, string>) => Object.entries(m).map(([s, v]) => statement(s, v)).filter((t): t is EvictionThreshold => t !== undefined);
  const hard = statements(c.evictionHard);
  const soft = statements(c.evictionSoft);
  const grace = new Map<string, number>();
  for (const [signal, val] of Object.entries(c.evictionSoftGracePeriod)) {
    if (!EVICTION_SIGNALS.includes(signal)) throw new Error(`unsupported eviction signal ${signal}`);
    const ms = nsToMs(goParseDuration(val));
    if (ms < 0) throw new Error(`invalid eviction grace period specified: ${val}, must be a positive value`);
    grace.set(signal, ms);
  }
  const reclaim = new Map<string, { quantity?: string; percentage?: number }>();
  for (const [signal, val] of Object.entries(c.evictionMinimumReclaim)) {
    if (!EVICTION_SIGNALS.includes(signal)) throw new Error(`unsupported eviction signal ${signal}`);
    if (val.endsWith('%')) {
      const p = parsePercentage(val);
      if (p <= 0) throw new Error(`eviction percentage minimum reclaim ${signal} must be positive: ${val}`);
      reclaim.set(signal, { percentage: p });
      continue;
    }
    validateQuantity(val);
    const q = parseQuantity(val.trim())!;
    if (q.nano < 0n) throw new Error(`negative eviction minimum reclaim specified for ${signal}`);
    reclaim.set(signal, { quantity: quantityString(q) });
  }
  for (const t of soft) {
    const g = grace.get(t.signal);
    if (g === undefined) throw new Error(`grace period must be specified for the soft eviction threshold ${t.signal}`);
    t.gracePeriod = g;
  }
  const all = [...hard, ...soft];
  for (const t of all) {
    const r = reclaim.get(t.signal);
    if (r) t.minReclaim = r;
  }
  return all;
}

/** the kubelet's parseResourceList for --system-reserved and --kube-reserved */
export function parseReservedResources(m: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m)) {
    if (!['cpu', 'memory', 'ephemeral-storage', 'pid'].includes(k)) throw new Error(`cannot reserve ${goQuote(k)} resource`);
    try {
      validateQuantity(v);
    } catch (e) {
      throw new Error(`failed to parse quantity ${goQuote(v)} for ${goQuote(k)} resource: ${(e as Error).message}`);
    }
    const q = parseQuantity(v.trim())!;
    if (q.nano < 0n) throw new Error(`resource quantity for ${goQuote(k)} cannot be negative: ${v}`);
    out[k] = quantityString(q);
  }
  return out;
}

/** cm.ParseQOSReserved: memory percentages only */
export function parseQOSReserved(m: Record<string, string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(m)) {
    if (k !== 'memory') throw new Error(`cannot reserve ${goQuote(k)} resource`);
    const fail = (why: string) => new Error(`failed to parse percentage ${goQuote(v)} for ${goQuote(k)} resource: ${why}`);
    if (!v.endsWith('%')) throw fail(`percentage expected, got '${v}'`);
    let p: number;
    try {
      p = Number(parseGoInt(v.replace(/%+$/, ''), 10, 64));
    } catch {
      throw fail(`invalid number in percentage '${v}'`);
    }
    if (p < 0 || p > 100) throw fail('percentage must be between 0 and 100');
    out[k] = p;
  }
  return out;
}

/**
 * The reservations the node's allocatable is computed with: --reserved-cpus, when it names CPUs,
 * replaces the cpu of --kube-reserved and --system-reserved (the kubelet moves its count into
 * systemReserved), as the kubelet does before it builds its container manager.
 */
export function reservedResources(c: Pick<KubeletConfiguration, 'kubeReserved' | 'systemReserved' | 'reservedSystemCPUs'>): { kubeReserved: Record<string, string>; systemReserved: Record<string, string> } {
  const kubeReserved = { ...c.kubeReserved };
  const systemReserved = { ...c.systemReserved };
  const cpus = c.reservedSystemCPUs === '' ? [] : parseCPUSet(c.reservedSystemCPUs);
  if (cpus.length > 0) {
    delete kubeReserved.cpu;
    systemReserved.cpu = String(cpus.length);
  }
  return { kubeReserved, systemReserved };
}

/**
 * The checks the kubelet makes after validation, as it starts (run, RunKubelet, NewMainKubelet),
 * with its messages: the lock file, the reserved resources, eviction thresholds, --qos-reserved,
 * the CPU manager's options, --node-ip, the cloud provider, the root directory and the sync
 * frequency. Returns the first failure, as the kubelet stops at it (undefined when none).
 */
export function checkKubeletStartup(c: KubeletConfiguration, f: KubeletFlags): string | undefined {
  try {
    if (f.exitOnLockContention && f.lockFilePath === '') return 'cannot exit on lock file contention: no lock file specified';
    const { kubeReserved, systemReserved } = reservedResources(c);
    try {
      parseReservedResources(kubeReserved);
    } catch (e) {
      return `--kube-reserved value failed to parse: ${(e as Error).message}`;
    }
    try {
      parseReservedResources(systemReserved);
    } catch (e) {
      return `--system-reserved value failed to parse: ${(e as Error).message}`;
    }
    if (!f.experimentalNodeAllocatableIgnoreEvictionThreshold) parseEvictionThresholds({ evictionHard: c.evictionHard, evictionSoft: {}, evictionSoftGracePeriod: {}, evictionMinimumReclaim: {} });
    try {
      parseQOSReserved(c.qosReserved);
    } catch (e) {
      return `--qos-reserved value failed to parse: ${(e as Error).message}`;
    }
    if (c.cpuManagerPolicy === 'none' && Object.keys(c.cpuManagerPolicyOptions).length > 0) return `None policy: received unsupported options=${goMap(c.cpuManagerPolicyOptions)}`;
    parseNodeIPs(f.nodeIP);
    if (f.rootDirectory === '') return `invalid root directory ${goQuote(f.rootDirectory)}`;
    if (c.syncFrequency <= 0) return `invalid sync frequency ${msToNs(c.syncFrequency)}`;
    if (f.cloudProvider !== '' && f.cloudProvider !== 'external') {
      return `cloud provider ${goQuote(f.cloudProvider)} was specified, but built-in cloud providers are disabled. Please set --cloud-provider=external and migrate to an external cloud provider`;
    }
    // NewMainKubelet parses every threshold (the hard ones were checked above unless ignored)
    parseEvictionThresholds(c);
  } catch (e) {
    return (e as Error).message;
  }
  return undefined;
}

/**
 * What Keelson's node agent cannot do, as errors for options asking for it (Keelson's wording;
 * Kubernetes accepts these values). See the flags' help for the options accepted with no effect.
 */
export function validateKeelsonSupport(c: KubeletConfiguration, f: KubeletFlags): string[] {
  const errs: string[] = [];
  const no = (what: string, why: string) => errs.push(`${what} is not supported by Keelson: ${why}`);
  if (c.cpuManagerPolicy !== 'none') no(`cpuManagerPolicy (--cpu-manager-policy) ${goQuote(c.cpuManagerPolicy)}`, 'its node agent assigns no exclusive CPUs; only "none"');
  if (c.memoryManagerPolicy !== 'None') no(`memoryManagerPolicy (--memory-manager-policy) ${goQuote(c.memoryManagerPolicy)}`, 'its node agent pins no memory to NUMA nodes; only "None"');
  if (c.topologyManagerPolicy !== 'none') no(`topologyManagerPolicy (--topology-manager-policy) ${goQuote(c.topologyManagerPolicy)}`, 'its node agent has no topology manager; only "none"');
  if (c.memorySwap.swapBehavior === 'LimitedSwap') no('memorySwap.swapBehavior "LimitedSwap"', 'its node agent gives containers no swap; leave it empty or "NoSwap"');
  if (f.lockFilePath !== '') no('--lock-file', 'its node agent takes no lock file');
  if (c.contentType !== 'application/json' && c.contentType !== 'application/vnd.kubernetes.protobuf') no(`contentType (--kube-api-content-type) ${goQuote(c.contentType)}`, 'application/json or application/vnd.kubernetes.protobuf');
  return errs;
}

// ─────────────────────────────────────────────────────────────────────────────
// The command line's flow (NewKubeletCommand's RunE, up to validation)
// ─────────────────────────────────────────────────────────────────────────────

export interface LogLine {
  msg: string;
  kv: Record<string, unknown>;
}

export interface ResolveInput {
  /** the configuration the command line was parsed into (defaultFlagKubeletConfiguration, then the flags) */
  flagConfig: KubeletConfiguration;
  /** the KubeletFlags the command line was parsed into */
  flags: KubeletFlags;
  /**
   * Parses the command line's flags again over `config` (kubeletConfigFlagPrecedence); the flags
   * module supplies it (cli/kubeletflags.ts applyKubeletFlagsOver).
   */
  reapplyFlags: (config: KubeletConfiguration) => void;
  /** whether a flag was given on the command line */
  changed?: (flag: string) => boolean;
  /** the daemon's feature gate: set from the configuration's featureGates, as the kubelet sets its global gate */
  gate?: FeatureGate;
  /** whether the host runs cgroup v1 (detected when not given) */
  cgroupV1?: boolean;
}

export interface ResolvedKubelet {
  config: KubeletConfiguration;
  flags: KubeletFlags;
  /** the lines the kubelet logs (at info level) along the way */
  logs: LogLine[];
}

/**
 * The kubelet's resolution of its options after the command line is parsed: the feature gates,
 * the flags' validation, the --config file, the --config-dir drop-ins, the flags again over them
 * (flags win), the logging section's and the configuration's validation. Precedence: built-in
 * defaults < --config < drop-ins < flags given. Throws an Error with the kubelet's message
 * (`failed to load kubelet config file, path: ..., error: ...`, `failed to validate kubelet
 * configuration, error: ...`, ...). Logging is not applied: call applyLoggingConfiguration.
 */
export function resolveKubeletConfiguration(input: ResolveInput): ResolvedKubelet {
  const logs: LogLine[] = [];
  const log = (msg: string, kv: Record<string, unknown>) => logs.push({ msg, kv });
  const f = input.flags;
  let config = input.flagConfig;
  const setGates = (gates: Record<string, boolean>) => {
    if (!input.gate) return;
    try {
      input.gate.setFromMap(gates);
    } catch (e) {
      throw new Error(`failed to set feature gates from initial flags-based config: ${(e as Error).message}`);
    }
  };
  setGates(config.featureGates);
  const flagErrs = validateKubeletFlags(f);
  if (flagErrs.length) throw new Error(`failed to validate kubelet flags: ${flagErrs[0]}`);
  if (input.changed?.('pod-infra-container-image')) log('--pod-infra-container-image will not be pruned by the image garbage collector in kubelet and should also be set in the remote runtime', {});
  const load: LoadOptions = { gate: input.gate, log };
  if (f.kubeletConfigFile) {
    try {
      config = loadKubeletConfigFile(f.kubeletConfigFile, load);
    } catch (e) {
      throw new Error(`failed to load kubelet config file, path: ${f.kubeletConfigFile}, error: ${(e as Error).message}`);
    }
  }
  if (f.kubeletDropinConfigDirectory) {
    try {
      config = mergeKubeletDropins(config, f.kubeletDropinConfigDirectory, load);
    } catch (e) {
      throw new Error(`failed to merge kubelet configs: ${(e as Error).message}`);
    }
  }
  if (f.kubeletConfigFile || f.kubeletDropinConfigDirectory) {
    try {
      input.reapplyFlags(config);
    } catch (e) {
      throw new Error(`failed to precedence kubeletConfigFlag: ${(e as Error).message}`);
    }
    setGates(config.featureGates);
  }
  const logErrs = validateLoggingConfiguration(config.logging, input.gate);
  if (logErrs.length) throw new Error(`initialize logging: ${aggregate(logErrs)}`);
  const errs = validateKubeletConfiguration(config, input.gate, { cgroupV1: input.cgroupV1 });
  if (errs.length) throw new Error(`failed to validate kubelet configuration, error: ${aggregate(errs)}`);
  if (config.kubeletCgroups !== '' && config.kubeReservedCgroup !== '' && !config.kubeletCgroups.startsWith(config.kubeReservedCgroup)) {
    log('unsupported configuration:KubeletCgroups is not within KubeReservedCgroup', {});
  }
  return { config, flags: f, logs };
}

/** Parses a --vmodule value into items (component-base's messages). */
export function parseVModule(value: string): VModuleItem[] {
  return klog.parseVModule(value);
}

/** VerbosityLevelPflag's parse of -v */
export function parseVerbosity(value: string): number {
  return Number(parseGoUint(value, 10, 32));
}
