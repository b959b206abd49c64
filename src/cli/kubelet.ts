// `keelson kubelet`: the node agent as a daemon, with the kubelet's flags and config file
// (cli/kubeletflags.ts, nodeagent/options.ts), against any Kubernetes-compatible API server, running
// pods through a CRI v1 runtime (containerd) at --container-runtime-endpoint.
//
// Start-up, as the kubelet's: the options resolved (defaults < --config < --config-dir < flags),
// validated, logged; the client certificate bootstrapped with --bootstrap-kubeconfig when the
// --kubeconfig file does not exist; the runtime connected; the node registered; the pod workers
// started; the ports served (--port with authentication and authorization, --read-only-port,
// --healthz-port). SIGTERM stops the workers (pods keep running: a restarted kubelet finds them
// in the runtime) and exits 0.
//
// Standalone mode (no --kubeconfig): the static pods of --pod-manifest-path and --manifest-url are
// run, and nothing is registered or reported; their status is the kubelet's own (its /pods). With
// --runonce the static pods are started, waited for, and the kubelet exits (its servers never
// start), as the kubelet's RunOnce.
import { CredentialPlugins, loadCredentialProviders } from '../nodeagent/credentialplugins.js';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { Command, FeatureGate, parseDuration } from './flags.js';
import * as klog from './klog.js';
import { daemonLogger, exitOnSignals } from './daemon.js';
import { getVersionInfo, userAgent } from './version.js';
import { declareKubeletFlags, KUBELET_LONG_HELP, resolveKubeletCommandLine } from './kubeletflags.js';
import { serveKubelet } from './kubeletserving.js';
import { exitWithParent } from './agent.js';
import {
  aggregate, applyLoggingConfiguration, cgroupV1Host, checkKubeletStartup, configzJSON, defaultFlagKubeletConfiguration, defaultKubeletFlags, effectiveSeccompDefault,
  KUBELET_FEATURES, parseEvictionThresholds, parseNodeIPs, parseQOSReserved, reservedResources, validateKeelsonSupport, type KubeletConfiguration, type KubeletFlags,
} from '../nodeagent/options.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { restConfigFromConnection, RotatingClientCert, type RESTConfig } from '../client/rest.js';
import { CRIClient } from '../nodeagent/cri.js';
import { ContainerManager } from '../nodeagent/cgroups.js';
import { Kubelet } from '../nodeagent/kubelet.js';
import { bootstrapClientCertificate, kubeconfigClientCertPath } from '../nodeagent/bootstrap.js';
import { CertificateManager } from '../nodeagent/certmanager.js';
import { SysctlAllowlist } from '../nodeagent/sysctls.js';
import { verificationPolicy, type VerificationPolicy } from '../nodeagent/pullrecords.js';
import { parseQuantity, quantityValue } from '../schema/validation/quantity.js';
import { defaultNodeIP } from '../nodeagent/node.js';
import { ResourceSampler } from '../nodeagent/stats.js';
import type { NodeAgentView } from '../nodeagent/server.js';

/** KEELSON_IMAGE_GC_PERIOD (a Go duration): the image garbage collection's period instead of the
 * kubelet's 5 minutes. For tests only; the kubelet has no setting for it. */
function imageGCPeriodForTests(): number | undefined {
  const v = process.env['KEELSON_IMAGE_GC_PERIOD'];
  if (!v) return undefined;
  let ms: number;
  try {
    ms = parseDuration(v);
  } catch (e) {
    throw new Error(`failed to run Kubelet: KEELSON_IMAGE_GC_PERIOD ${JSON.stringify(v)}: ${(e as Error).message}`);
  }
  if (!(ms > 0)) throw new Error(`failed to run Kubelet: KEELSON_IMAGE_GC_PERIOD ${JSON.stringify(v)} must be positive`);
  return ms;
}

/**
 * maxOpenFiles: the kubelet sets its own limit of open files, soft and hard (rlimit.SetNumFiles).
 * Node has no setrlimit, so util-linux's prlimit sets it on this process; as in the kubelet, a
 * failure (no CAP_SYS_RESOURCE to raise the hard limit, say) is logged and the start goes on.
 */
function setMaxOpenFiles(n: number, log: ReturnType<typeof daemonLogger>): void {
  if (process.platform !== 'linux' || !(n > 0)) return;
  const r = spawnSync('prlimit', ['--pid', String(process.pid), `--nofile=${n}:${n}`], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : (r.stderr || `prlimit exited with ${r.status}`).trim().replace(/^prlimit: /, '');
    log.error(new Error(why), 'Failed to set rlimit on max file handles');
  }
}

async function restFor(kubeconfig: string): Promise<RESTConfig> {
  return restConfigFromConnection(await loadKubeconfig({ explicitPath: kubeconfig, kubeconfigEnv: '' }));
}

/** the node's name: --hostname-override, else the host name, lower-cased as the kubelet does */
function nodeNameOf(f: KubeletFlags): string {
  return (f.hostnameOverride || os.hostname()).trim().toLowerCase();
}

export function kubeletCommand(): Command {
  const gate = new FeatureGate(KUBELET_FEATURES as any);
  const cfg = defaultFlagKubeletConfiguration(gate);
  const f = defaultKubeletFlags();
  const cmd: Command = new Command({
    use: 'kubelet',
    silenceUsage: true,
    short: 'Run the node agent (kubelet): register this node and run its pods through a CRI runtime',
    long: KUBELET_LONG_HELP,
    args: 'none',
    run: async ({ flags }) => {
      const { config, flags: kf, logs } = resolveKubeletCommandLine(flags, cfg, f, gate);
      const lerrs = applyLoggingConfiguration(config.logging, gate);
      if (lerrs.length) throw new Error(`initialize logging: ${aggregate(lerrs)}`);
      const log = daemonLogger();
      for (const l of logs) log.info(l.msg, l.kv);
      const unsupported = validateKeelsonSupport(config, kf);
      if (unsupported.length) throw new Error(aggregate(unsupported));
      const startup = checkKubeletStartup(config, kf);
      if (startup) throw new Error(`failed to run Kubelet: ${startup}`);
      klog.printFlags(flags, 1);
      await run(config, kf, log, { inPlaceResize: gate.enabled('InPlacePodVerticalScaling'), qosReserved: gate.enabled('QOSReserved'), ensureSecretPulledImages: gate.enabled('KubeletEnsureSecretPulledImages'), userNamespaces: gate.enabled('UserNamespacesSupport'), saTokenForCredentialProviders: gate.enabled('KubeletServiceAccountTokenForCredentialProviders'), recursiveReadOnlyMounts: gate.enabled('RecursiveReadOnlyMounts'), supplementalGroupsPolicy: gate.enabled('SupplementalGroupsPolicy') });
    },
  });
  declareKubeletFlags(cmd, cfg, f, gate);
  return cmd;
}

async function run(config: KubeletConfiguration, f: KubeletFlags, log: ReturnType<typeof daemonLogger>, gates: { inPlaceResize: boolean; qosReserved: boolean; ensureSecretPulledImages: boolean; userNamespaces: boolean; saTokenForCredentialProviders: boolean; recursiveReadOnlyMounts: boolean; supplementalGroupsPolicy: boolean }): Promise<void> {
  log.info('Kubelet version', { kubeletVersion: getVersionInfo().gitVersion });
  if (!f.kubeconfig && f.bootstrapKubeconfig) {
    throw new Error('failed to run Kubelet: --bootstrap-kubeconfig needs --kubeconfig: the path where the kubeconfig it obtains is written');
  }
  const nodeName = nodeNameOf(f);
  const agent = userAgent('kubelet');
  const rootDir = isAbsolute(f.rootDirectory) ? f.rootDirectory : resolve(f.rootDirectory);
  const certDir = isAbsolute(f.certDirectory) ? f.certDirectory : resolve(f.certDirectory);

  // the client certificate, with the bootstrap credentials when the kubeconfig is missing or expired
  if (f.kubeconfig && f.bootstrapKubeconfig) {
    let boot: RESTConfig;
    try {
      boot = await restFor(f.bootstrapKubeconfig);
    } catch (e) {
      throw new Error(`failed to run Kubelet: unable to load bootstrap kubeconfig: ${(e as Error).message}`);
    }
    await bootstrapClientCertificate({
      bootstrapRest: boot,
      server: boot.server,
      caPEM: typeof boot.ca === 'string' ? boot.ca : boot.ca ? Buffer.from(boot.ca as any).toString('utf8') : undefined,
      insecureSkipTLSVerify: boot.insecureSkipTLSVerify,
      nodeName,
      certDir,
      kubeconfigPath: f.kubeconfig,
      userAgent: agent,
      log,
    });
  }
  let rest: RESTConfig | undefined;
  if (!f.kubeconfig) {
    log.info('Standalone mode, no API client');
  } else {
    try {
      rest = await restFor(f.kubeconfig);
    } catch (e) {
      throw new Error(`failed to run Kubelet: invalid kubeconfig: ${(e as Error).message}`);
    }
  }
  // --rotate-certificates: the client certificate is renewed before it expires (nodeagent/certmanager.ts),
  // when the kubeconfig uses the one in --cert-dir (as the bootstrap writes it)
  let clientCerts: CertificateManager | undefined;
  if (config.rotateCertificates && rest) {
    const current = join(certDir, 'kubelet-client-current.pem');
    if (rest.cert && rest.key && kubeconfigClientCertPath(f.kubeconfig) === current) {
      const source = new RotatingClientCert(rest.cert, rest.key);
      rest = { ...rest, certSource: source };
      clientCerts = new CertificateManager({ kind: 'client', rest, nodeName, certDir, log, userAgent: agent, use: (cert, key) => source.set(cert, key) });
    } else {
      log.warn('Client certificate rotation is off: the kubeconfig does not use the certificate of --cert-dir', { expected: current });
    }
  }

  // the runtime
  const endpoint = config.containerRuntimeEndpoint;
  let cri: CRIClient;
  try {
    cri = await CRIClient.connect({ endpoint, imageEndpoint: config.imageServiceEndpoint || undefined, timeoutMs: config.runtimeRequestTimeout });
  } catch (e) {
    throw new Error(`failed to run Kubelet: validate service connection: ${(e as Error).message}`);
  }
  log.info('Container runtime initialized', { containerRuntime: cri.runtimeName, version: cri.runtimeVersion, apiVersion: cri.runtimeApiVersion });

  // the container log manager's size (kuberuntime refuses to start with one that does not parse)
  const maxSize = parseQuantity(config.containerLogMaxSize);
  if (!maxSize) {
    throw new Error(`failed to run Kubelet: failed to initialize container log manager: failed to parse container log max size ${JSON.stringify(config.containerLogMaxSize)}: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
  }
  const logMaxSize = Number(quantityValue(maxSize));
  const { ips } = parseNodeIPs(f.nodeIP);
  const nodeIPs = ips.length ? ips : [defaultNodeIP()];
  const reserved = reservedResources(config);
  let sysctls: SysctlAllowlist;
  try {
    sysctls = new SysctlAllowlist(config.allowedUnsafeSysctls);
  } catch (e) {
    throw new Error(`failed to run Kubelet: ${(e as Error).message}`);
  }
  // the node's and the pods' cgroups (NewContainerManager's checks: cgroupsPerQOS needs an existing --cgroup-root)
  let cgroupRoot = config.cgroupRoot;
  if (config.cgroupsPerQOS && cgroupRoot === '') {
    log.info('--cgroups-per-qos enabled, but --cgroup-root was not specified.  Defaulting to /');
    cgroupRoot = '/';
  }
  let containerManager: ContainerManager;
  try {
    containerManager = new ContainerManager({
      cgroupsPerQOS: config.cgroupsPerQOS,
      cgroupRoot,
      cgroupDriver: config.cgroupDriver,
      enforceNodeAllocatable: config.enforceNodeAllocatable,
      podPidsLimit: config.podPidsLimit,
      cpuCFSQuota: config.cpuCFSQuota,
      cpuCFSQuotaPeriodUs: Math.round(config.cpuCFSQuotaPeriod * 1000),
      reserved: [reserved.kubeReserved, reserved.systemReserved],
      systemReserved: reserved.systemReserved,
      kubeReserved: reserved.kubeReserved,
      systemReservedCgroup: config.systemReservedCgroup,
      kubeReservedCgroup: config.kubeReservedCgroup,
      kubeletCgroups: config.kubeletCgroups,
      systemCgroups: config.systemCgroups,
      runtimeCgroups: f.runtimeCgroups,
      kubeletOOMScoreAdj: config.oomScoreAdj,
      qosReservedMemoryPercent: gates.qosReserved ? parseQOSReserved(config.qosReserved).memory : undefined,
      log,
    });
  } catch (e) {
    cri.close();
    throw new Error(`failed to run Kubelet: ${(e as Error).message}`);
  }
  // the image credential provider plugins, registered as the kubelet registers them with its
  // runtime manager: a config it cannot use ends the start
  let plugins: CredentialPlugins | undefined;
  if (f.imageCredentialProviderConfigPath !== '' || f.imageCredentialProviderBinDir !== '') {
    try {
      const providers = loadCredentialProviders(f.imageCredentialProviderConfigPath, f.imageCredentialProviderBinDir, { saTokenForCredentialProviders: gates.saTokenForCredentialProviders });
      plugins = new CredentialPlugins(providers, f.imageCredentialProviderBinDir, (provider, err) => log.error(err, 'Failed getting credential from external registry credential provider', { provider }), log);
    } catch (e) {
      log.error(e as Error, 'Failed to register CRI auth plugins');
      cri.close();
      process.exit(1);
    }
  }
  // KubeletEnsureSecretPulledImages: the credential verification policy (an allowlist entry the
  // kubelet cannot use ends the start)
  let pullCredentialsPolicy: VerificationPolicy | undefined;
  if (gates.ensureSecretPulledImages) {
    try {
      pullCredentialsPolicy = verificationPolicy(config.imagePullCredentialsVerificationPolicy, config.preloadedImagesVerificationAllowlist);
    } catch (e) {
      cri.close();
      throw new Error(`failed to run Kubelet: ${(e as Error).message}`);
    }
  }
  const kubelet = new Kubelet({
    pullCredentialsPolicy,
    credentialPlugins: plugins,
    containerManager,
    rest,
    runOnce: config.runOnce,
    inPlaceResize: gates.inPlaceResize,
    userNamespaces: gates.userNamespaces,
    idsPerPod: config.userNamespaces?.idsPerPod,
    nodeStatusRuntimeHandlers: gates.recursiveReadOnlyMounts || gates.userNamespaces,
    nodeStatusFeatures: gates.supplementalGroupsPolicy,
    userAgent: agent,
    kubeAPIQPS: config.kubeAPIQPS,
    kubeAPIBurst: config.kubeAPIBurst,
    eventQPS: config.eventRecordQPS,
    eventBurst: config.eventBurst,
    cri,
    log,
    nodeName,
    hostname: nodeName,
    nodeIPs,
    rootDir,
    labels: f.nodeLabels,
    taints: config.registerWithTaints,
    providerID: config.providerID,
    podCIDR: config.podCIDR,
    maxPods: config.maxPods,
    podsPerCore: config.podsPerCore,
    sysctls,
    registryPullQPS: config.registryPullQPS,
    registryBurst: config.registryBurst,
    maxParallelImagePulls: config.maxParallelImagePulls ?? 0,
    kubeletPort: config.port,
    systemReserved: reserved.systemReserved,
    kubeReserved: reserved.kubeReserved,
    evictionHard: config.evictionHard,
    eviction: { thresholds: parseEvictionThresholds(config), pressureTransitionPeriodMs: config.evictionPressureTransitionPeriod, maxPodGracePeriodSeconds: config.evictionMaxPodGracePeriod },
    nodeStatusMaxImages: config.nodeStatusMaxImages,
    registerNode: config.registerNode,
    nodeStatusUpdateFrequencyMs: config.nodeStatusUpdateFrequency,
    nodeStatusReportFrequencyMs: config.nodeStatusReportFrequency,
    nodeLeaseDurationSeconds: config.nodeLeaseDurationSeconds,
    syncFrequencyMs: config.syncFrequency,
    dns: { clusterDNS: config.clusterDNS, clusterDomain: config.clusterDomain, resolvConf: config.resolvConf },
    settings: { cpuCFSQuota: config.cpuCFSQuota, cpuCFSQuotaPeriodUs: Math.round(config.cpuCFSQuotaPeriod * 1000), memoryCapacity: os.totalmem(), seccompDefault: effectiveSeccompDefault(config, f), memoryOOMGroup: !cgroupV1Host() && config.singleProcessOOMKill !== true },
    serializeImagePulls: config.serializeImagePulls,
    podLogsDir: config.podLogsDir,
    staticPodPath: config.staticPodPath,
    staticPodURL: config.staticPodURL,
    staticPodURLHeader: config.staticPodURLHeader,
    fileCheckFrequencyMs: config.fileCheckFrequency,
    localStorage: { capacityIsolation: config.localStorageCapacityIsolation, volumeStatsAggPeriodMs: config.volumeStatsAggPeriod },
    containerLogs: {
      maxSizeBytes: logMaxSize,
      maxFiles: config.containerLogMaxFiles,
      monitorIntervalMs: config.containerLogMonitorInterval,
      maxWorkers: config.containerLogMaxWorkers,
    },
    imageGC: {
      highThresholdPercent: config.imageGCHighThresholdPercent,
      lowThresholdPercent: config.imageGCLowThresholdPercent,
      minAgeMs: config.imageMinimumGCAge,
      maxAgeMs: config.imageMaximumGCAge,
      sandboxImage: f.podSandboxImage,
      periodMs: imageGCPeriodForTests(),
    },
    httpCheckFrequencyMs: config.httpCheckFrequency,
    clusterDomain: config.clusterDomain,
    kubeletVersion: getVersionInfo().gitVersion,
  });

  setMaxOpenFiles(config.maxOpenFiles, log);
  // --oom-score-adj: the kubelet's own (the OOM killer takes it last); a failure is logged, as in the kubelet
  try {
    writeFileSync('/proc/self/oom_score_adj', String(config.oomScoreAdj));
  } catch (e) {
    log.info('Failed to ApplyOOMScoreAdj', { err: (e as Error).message });
  }
  try {
    kubelet.startContainerManager();
  } catch (e) {
    await kubelet.stop();
    cri.close();
    throw e;
  }
  if (config.runOnce) {
    // (the kubelet's RunOnce: no servers, no node status; the pods go on running after the exit)
    try {
      await kubelet.runOnce();
    } catch (e) {
      throw new Error(`runonce failed: ${(e as Error).message}`);
    } finally {
      await kubelet.stop();
      cri.close();
    }
    log.info('Started kubelet as runonce');
    return;
  }

  const started = Date.now();
  const sampler = new ResourceSampler(cri, containerManager, log);
  const view: NodeAgentView = {
    nodeName,
    pods: () => kubelet.pods.pods(),
    runningPods: async () => kubelet.pods.runningPods(),
    configz: () => configzJSON(config),
    containerLogPath: async (ns, pod, container, previous) => kubelet.pods.containerLogPath(ns, pod, container, previous),
    streamingURL: (kind, ns, pod, container, opts) => kubelet.pods.streamingURL(kind, ns, pod, container, opts),
    runInContainer: (ns, pod, container, cmd, uid) => kubelet.pods.runInContainer(ns, pod, container, cmd, uid),
    resourceSample: (opts) => sampler.sample(opts),
    storageSummary: () => kubelet.storageSummary(),
    probeMetrics: () => kubelet.probeMetrics.text(),
    admissionRejections: () => kubelet.pods.admissionRejections,
    startTime: started,
    healthChecks: () => ({
      ping: () => undefined,
      log: () => undefined,
      syncloop: () => (Date.now() - started < 60_000 ? undefined : kubelet.pods.syncLoopError()),
    }),
  };
  const serving = config.enableServer
    ? await serveKubelet(
        {
          address: config.address,
          port: config.port,
          readOnlyPort: config.readOnlyPort,
          healthzBindAddress: config.healthzBindAddress,
          healthzPort: config.healthzPort,
          tlsCertFile: config.tlsCertFile,
          tlsPrivateKeyFile: config.tlsPrivateKeyFile,
          tlsCipherSuites: config.tlsCipherSuites,
          tlsMinVersion: config.tlsMinVersion,
          certDir,
          anonymousAuth: config.authentication.anonymous.enabled,
          clientCAFile: config.authentication.x509.clientCAFile,
          webhookAuthn: config.authentication.webhook.enabled,
          webhookAuthnCacheTTLms: config.authentication.webhook.cacheTTL,
          authorizationMode: config.authorization.mode as 'AlwaysAllow' | 'Webhook',
          authzAuthorizedTTLms: config.authorization.webhook.cacheAuthorizedTTL,
          authzUnauthorizedTTLms: config.authorization.webhook.cacheUnauthorizedTTL,
          enableDebuggingHandlers: config.enableDebuggingHandlers,
          enableSystemLogHandler: config.enableSystemLogHandler,
          // (validation refuses it without the NodeLogQuery gate)
          enableSystemLogQuery: config.enableSystemLogQuery,
          enableDebugFlagsHandler: config.enableDebugFlagsHandler,
          enableProfilingHandler: config.enableProfilingHandler,
          setVerbosity: (v) => {
            klog.configure({ verbosity: v });
            log.info('Log verbosity changed', { v });
          },
          hostnames: [nodeName],
          ips: nodeIPs,
          // (validation refuses serverTLSBootstrap without the RotateKubeletServerCertificate gate)
          rotateServerCertificates: config.serverTLSBootstrap,
          streamingConnectionIdleTimeoutMs: config.streamingConnectionIdleTimeout,
        },
        view,
        rest,
        log,
      )
    : undefined;
  await kubelet.start();
  log.info('Started kubelet', { node: nodeName, server: rest?.server ?? '', port: serving ? config.port : 0 });

  // (the node agent of keelson server goes with the server, even one killed without its SIGTERM)
  exitWithParent('node agent', log);
  clientCerts?.start();
  exitOnSignals(log, async () => {
    const timer = setTimeout(() => process.exit(0), 10_000);
    timer.unref();
    await clientCerts?.stop();
    await kubelet.stop();
    await serving?.close();
    cri.close();
  });
  await new Promise(() => {});
}
