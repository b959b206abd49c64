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
// Standalone mode (no --kubeconfig: static pods only) is not supported: the node agent's pods come
// from the API server; the error says so.
import os from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { Command, FeatureGate } from './flags.js';
import * as klog from './klog.js';
import { daemonLogger, exitOnSignals } from './daemon.js';
import { getVersionInfo, userAgent } from './version.js';
import { declareKubeletFlags, KUBELET_LONG_HELP, resolveKubeletCommandLine } from './kubeletflags.js';
import { serveKubelet } from './kubeletserving.js';
import { PARENT_ENV } from './agent.js';
import {
  aggregate, applyLoggingConfiguration, checkKubeletStartup, configzJSON, defaultFlagKubeletConfiguration, defaultKubeletFlags, effectiveSeccompDefault,
  KUBELET_FEATURES, parseEvictionThresholds, parseNodeIPs, reservedResources, validateKeelsonSupport, type KubeletConfiguration, type KubeletFlags,
} from '../nodeagent/options.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { restConfigFromConnection, RotatingClientCert, type RESTConfig } from '../client/rest.js';
import { CRIClient } from '../nodeagent/cri.js';
import { Kubelet } from '../nodeagent/kubelet.js';
import { bootstrapClientCertificate, kubeconfigClientCertPath } from '../nodeagent/bootstrap.js';
import { CertificateManager } from '../nodeagent/certmanager.js';
import { SysctlAllowlist } from '../nodeagent/sysctls.js';
import { parseQuantity, quantityValue } from '../schema/validation/quantity.js';
import { defaultNodeIP } from '../nodeagent/node.js';
import { ResourceSampler } from '../nodeagent/stats.js';
import type { NodeAgentView } from '../nodeagent/server.js';

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
      await run(config, kf, log);
    },
  });
  declareKubeletFlags(cmd, cfg, f, gate);
  return cmd;
}

async function run(config: KubeletConfiguration, f: KubeletFlags, log: ReturnType<typeof daemonLogger>): Promise<void> {
  log.info('Kubelet version', { kubeletVersion: getVersionInfo().gitVersion });
  if (!f.kubeconfig) {
    throw new Error('failed to run Kubelet: standalone mode (no --kubeconfig) is not supported by Keelson\'s kubelet: its pods come from the API server; give --kubeconfig (and --bootstrap-kubeconfig to request its client certificate)');
  }
  const nodeName = nodeNameOf(f);
  const agent = userAgent('kubelet');
  const rootDir = isAbsolute(f.rootDirectory) ? f.rootDirectory : resolve(f.rootDirectory);
  const certDir = isAbsolute(f.certDirectory) ? f.certDirectory : resolve(f.certDirectory);

  // the client certificate, with the bootstrap credentials when the kubeconfig is missing or expired
  if (f.bootstrapKubeconfig) {
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
  let rest: RESTConfig;
  try {
    rest = await restFor(f.kubeconfig);
  } catch (e) {
    throw new Error(`failed to run Kubelet: invalid kubeconfig: ${(e as Error).message}`);
  }
  // --rotate-certificates: the client certificate is renewed before it expires (nodeagent/certmanager.ts),
  // when the kubeconfig uses the one in --cert-dir (as the bootstrap writes it)
  let clientCerts: CertificateManager | undefined;
  if (config.rotateCertificates) {
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
  const kubelet = new Kubelet({
    rest,
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
    settings: { cpuCFSQuota: config.cpuCFSQuota, cpuCFSQuotaPeriodUs: Math.round(config.cpuCFSQuotaPeriod * 1000), memoryCapacity: os.totalmem(), seccompDefault: effectiveSeccompDefault(config, f) },
    serializeImagePulls: config.serializeImagePulls,
    podLogsDir: config.podLogsDir,
    staticPodPath: config.staticPodPath,
    staticPodURL: config.staticPodURL,
    staticPodURLHeader: config.staticPodURLHeader,
    fileCheckFrequencyMs: config.fileCheckFrequency,
    containerLogs: {
      maxSizeBytes: logMaxSize,
      maxFiles: config.containerLogMaxFiles,
      monitorIntervalMs: config.containerLogMonitorInterval,
      maxWorkers: config.containerLogMaxWorkers,
    },
    httpCheckFrequencyMs: config.httpCheckFrequency,
    clusterDomain: config.clusterDomain,
    kubeletVersion: getVersionInfo().gitVersion,
  });

  const started = Date.now();
  const sampler = new ResourceSampler(cri);
  const view: NodeAgentView = {
    nodeName,
    pods: () => kubelet.pods.pods(),
    runningPods: async () => kubelet.pods.runningPods(),
    configz: () => configzJSON(config),
    containerLogPath: async (ns, pod, container, previous) => kubelet.pods.containerLogPath(ns, pod, container, previous),
    streamingURL: (kind, ns, pod, container, opts) => kubelet.pods.streamingURL(kind, ns, pod, container, opts),
    runInContainer: (ns, pod, container, cmd, uid) => kubelet.pods.runInContainer(ns, pod, container, cmd, uid),
    resourceSample: () => sampler.sample(),
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
          enableDebugFlagsHandler: config.enableDebugFlagsHandler,
          setVerbosity: (v) => {
            klog.configure({ verbosity: v });
            log.info('Log verbosity changed', { v });
          },
          hostnames: [nodeName],
          ips: nodeIPs,
          // (validation refuses serverTLSBootstrap without the RotateKubeletServerCertificate gate)
          rotateServerCertificates: config.serverTLSBootstrap,
        },
        view,
        rest,
        log,
      )
    : undefined;
  await kubelet.start();
  log.info('Started kubelet', { node: nodeName, server: rest.server, port: serving ? config.port : 0 });

  // (the node agent of keelson server goes with the server, even one killed without its SIGTERM)
  const parent = Number(process.env[PARENT_ENV] ?? 0);
  if (parent > 0) {
    setInterval(() => {
      try {
        process.kill(parent, 0);
      } catch {
        log.warn('The server that started this node agent is gone; stopping', { pid: parent });
        process.kill(process.pid, 'SIGTERM');
      }
    }, 1000).unref();
  }
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
