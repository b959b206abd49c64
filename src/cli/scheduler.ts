// `keelson scheduler`: the scheduler as a daemon of its own, with kube-scheduler's flags, against
// any Kubernetes-compatible API server (--kubeconfig, --master, --config's clientConnection, or the
// in-cluster configuration). `keelson server` runs the same scheduler in its own process.
//
// As kube-scheduler: without --config the (deprecated) flags --kubeconfig, --kube-api-qps,
// --kube-api-burst, --kube-api-content-type, --lock-object-*, --pod-max-in-unschedulable-pods-
// duration and the --leader-elect* flags configure it; with --config (a KubeSchedulerConfiguration,
// kubescheduler.config.k8s.io/v1) the file does, and only the --leader-elect* flags given on the
// command line override it. Each profile of the file is a scheduler name; a plugin configuration
// Keelson cannot honour is refused at start-up (scheduler/config.ts).
//
// It serves HTTPS on --secure-port (10259): /healthz and /livez (ping, log, and leaderElection with
// leader election on), /readyz (those, sched-handler-sync and shutdown), /metrics (the process's,
// rest_client_requests_total, leader_election_master_status, scheduler_pending_pods,
// scheduler_schedule_attempts_total, scheduler_scheduling_attempt_duration_seconds,
// scheduler_preemption_attempts_total, scheduler_preemption_victims), and with profiling on
// (--profiling, or the file's enableProfiling; default true) /debug/pprof/ (client/profiling.ts),
// behind authentication and authorization delegated to the API server (componentserving.ts). It
// exits 1 when it loses its Lease, as kube-scheduler does.
import { readFileSync, writeFileSync } from 'node:fs';
import client from 'prom-client';
import YAML from 'yaml';
import { Command, FeatureGate, formatDuration, type FlagSet } from './flags.js';
import * as klog from './klog.js';
import { daemonLogger } from './daemon.js';
import { getVersionInfo, userAgent } from './version.js';
import { declareDelegatedAuthFlags, declareSecureServingFlags, defaultDelegatedAuthFlags, defaultSecureServingFlags, DelegatedAuth, exitComponentOnSignals, serveComponent, serveComponentMetrics } from './componentserving.js';
import { Health, type HealthCheck } from '../apiserver/health.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { processProfiler, serveDebugFlags, serveDebugPprof } from '../client/profiling.js';
import { restConfigFromConnection, type RESTConfig } from '../client/rest.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { ConfigError, defaultSchedulerConfiguration, parseSchedulerConfiguration, type SchedulerConfiguration } from '../scheduler/config.js';

const FEATURES = { ...klog.loggingFeatureSpecs } as const;
const PAIR_NAME = 'kube-scheduler';

/** the flags of `keelson scheduler` that are not the secure port's or the logs' */
interface SchedulerFlags {
  config: string;
  master: string;
  writeConfigTo: string;
  // deprecated (kube-scheduler keeps them for when --config is not given)
  kubeconfig: string;
  kubeAPIContentType: string;
  kubeAPIQPS: number;
  kubeAPIBurst: number;
  lockObjectName: string;
  lockObjectNamespace: string;
  podMaxInUnschedulablePodsDurationMs: number;
  profiling: boolean;
  contentionProfiling: boolean;
  // leader election
  leaderElect: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  resourceLock: string;
  resourceName: string;
  resourceNamespace: string;
  disabledMetrics: string[];
}

function defaults(): SchedulerFlags {
  return {
    config: '',
    master: '',
    writeConfigTo: '',
    kubeconfig: '',
    kubeAPIContentType: 'application/vnd.kubernetes.protobuf',
    kubeAPIQPS: 50,
    kubeAPIBurst: 100,
    lockObjectName: 'kube-scheduler',
    lockObjectNamespace: 'kube-system',
    podMaxInUnschedulablePodsDurationMs: 300_000,
    // (kube-scheduler's defaults)
    profiling: true,
    contentionProfiling: true,
    leaderElect: true,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    resourceLock: 'leases',
    resourceName: 'kube-scheduler',
    resourceNamespace: 'kube-system',
    disabledMetrics: [],
  };
}

function declare(cmd: Command, d: SchedulerFlags, serving: ReturnType<typeof defaultSecureServingFlags>, auth: ReturnType<typeof defaultDelegatedAuthFlags>, gate: FeatureGate): void {
  const s = cmd.sections;
  const misc = s.flagSet('misc');
  misc.stringVar(d, 'config', 'config', 'The path to the configuration file (a KubeSchedulerConfiguration, kubescheduler.config.k8s.io/v1).');
  misc.stringVar(d, 'master', 'master', 'The address of the Kubernetes API server (overrides any value in kubeconfig)');
  misc.stringVar(d, 'writeConfigTo', 'write-config-to', 'If set, write the configuration values to this file and exit.');
  declareSecureServingFlags(s.flagSet('secure serving'), serving, PAIR_NAME);
  declareDelegatedAuthFlags(s.flagSet('authentication'), s.flagSet('authorization'), auth);
  const dep = s.flagSet('deprecated');
  dep.boolVar(d, 'contentionProfiling', 'contention-profiling', 'DEPRECATED: enable block profiling, if profiling is enabled. This parameter is ignored if a config file is specified in --config. (Node.js has no block profiler: /debug/pprof/block stays empty.)');
  dep.int32Var(d, 'kubeAPIBurst', 'kube-api-burst', 'DEPRECATED: burst to use while talking with kubernetes apiserver. This parameter is ignored if a config file is specified in --config.');
  dep.stringVar(d, 'kubeAPIContentType', 'kube-api-content-type', 'DEPRECATED: content type of requests sent to apiserver. This parameter is ignored if a config file is specified in --config. (Keelson\'s client sends JSON whatever this says.)');
  dep.float64Var(d, 'kubeAPIQPS', 'kube-api-qps', 'DEPRECATED: QPS to use while talking with kubernetes apiserver. This parameter is ignored if a config file is specified in --config.');
  dep.stringVar(d, 'kubeconfig', 'kubeconfig', 'DEPRECATED: path to kubeconfig file with authorization and master location information. This parameter is ignored if a config file is specified in --config.');
  dep.stringVar(d, 'lockObjectName', 'lock-object-name', 'DEPRECATED: define the name of the lock object. Will be removed in favor of leader-elect-resource-name. This parameter is ignored if a config file is specified in --config.');
  dep.stringVar(d, 'lockObjectNamespace', 'lock-object-namespace', 'DEPRECATED: define the namespace of the lock object. Will be removed in favor of leader-elect-resource-namespace. This parameter is ignored if a config file is specified in --config.');
  dep.durationVar(d, 'podMaxInUnschedulablePodsDurationMs', 'pod-max-in-unschedulable-pods-duration', 'DEPRECATED: the maximum time a pod can stay in unschedulablePods. If a pod stays in unschedulablePods for longer than this value, the pod will be moved from unschedulablePods to backoffQ or activeQ. This flag is deprecated and will be removed in a future version.');
  dep.boolVar(d, 'profiling', 'profiling', 'DEPRECATED: enable profiling via web interface host:port/debug/pprof/. This parameter is ignored if a config file is specified in --config. (Keelson\'s profiles come from V8\'s profilers, in Go\'s pprof format: profile (CPU) and heap; see the README.)');
  const le = s.flagSet('leader election');
  le.boolVar(d, 'leaderElect', 'leader-elect', 'Start a leader election client and gain leadership before executing the main loop. Enable this when running replicated components for high availability.');
  le.durationVar(d, 'leaseDurationMs', 'leader-elect-lease-duration', 'The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership of a led but unrenewed leader slot. This is effectively the maximum duration that a leader can be stopped before it is replaced by another candidate. This is only applicable if leader election is enabled.');
  le.durationVar(d, 'renewDeadlineMs', 'leader-elect-renew-deadline', 'The interval between attempts by the acting master to renew a leadership slot before it stops leading. This must be less than the lease duration. This is only applicable if leader election is enabled.');
  le.stringVar(d, 'resourceLock', 'leader-elect-resource-lock', "The type of resource object that is used for locking during leader election. Supported options are 'leases'.");
  le.stringVar(d, 'resourceName', 'leader-elect-resource-name', 'The name of resource object that is used for locking during leader election.');
  le.stringVar(d, 'resourceNamespace', 'leader-elect-resource-namespace', 'The namespace of resource object that is used for locking during leader election.');
  le.durationVar(d, 'retryPeriodMs', 'leader-elect-retry-period', 'The duration the clients should wait between attempting acquisition and renewal of a leadership. This is only applicable if leader election is enabled.');
  gate.addFlag(s.flagSet('feature gate'), { component: 'kube' });
  const metrics = s.flagSet('metrics');
  metrics.stringToString('allow-metric-labels', {}, 'The map from metric-label to value allow-list of this label. The key\'s format is <MetricName>,<LabelName>. The value\'s format is <allowed_value>,<allowed_value>...e.g. metric1,label1=\'v1,v2,v3\', metric1,label2=\'v1,v2,v3\' metric2,label1=\'v1,v2,v3\'. (Accepted, no effect.)');
  metrics.string('allow-metric-labels-manifest', '', 'The path to the manifest file that contains the allow-list mapping. The format of the file is the same as the flag --allow-metric-labels. Note that the flag --allow-metric-labels will override the manifest file. (Accepted, no effect.)');
  metrics.stringsVar(d, 'disabledMetrics', 'disabled-metrics', 'This flag provides an escape hatch for misbehaving metrics. You must provide the fully qualified metric name in order to disable it. Disclaimer: disabling metrics is higher in precedence than showing hidden metrics.');
  metrics.string('show-hidden-metrics-for-version', '', 'The previous version for which you want to show hidden metrics. Only the previous minor version is meaningful, other values will not be allowed. The format is <major>.<minor>, e.g.: \'1.16\'. (Keelson hides no metrics: accepted, no effect.)');
  klog.addFlags(s.flagSet('logs'));
  const gl = s.flagSet('global');
  gl.bool('help', false, `help for ${cmd.name}`, { shorthand: 'h' });
  gl.version();
}

export function schedulerCommand(): Command {
  const d = defaults();
  const serving = defaultSecureServingFlags(10259);
  const auth = defaultDelegatedAuthFlags();
  const gate = new FeatureGate(FEATURES as any);
  const cmd: Command = new Command({
    use: 'scheduler',
    silenceUsage: true,
    short: 'Run the scheduler (kube-scheduler) against an API server',
    long: 'The Keelson scheduler is a control plane process which assigns Pods to Nodes. It determines which Nodes are valid placements for each Pod in the scheduling queue according to constraints and available resources (node names, cordons, taints and tolerations, node selectors and affinity, host ports, resource requests), ranks each valid Node (least allocated, balanced allocation, preferred affinity, PreferNoSchedule taints, image locality) and binds the Pod to the best one. It takes kube-scheduler\'s flags and configuration file and runs against any Kubernetes-compatible API server; it does not preempt. `keelson server` runs the same scheduler in its own process.',
    args: 'none',
    run: async ({ flags }) => {
      await run(d, serving, auth, gate, flags);
    },
  });
  declare(cmd, d, serving, auth, gate);
  return cmd;
}

/** Options.ApplyTo: the configuration from --config, or from the deprecated and leader election flags */
function buildConfiguration(d: SchedulerFlags, flags: FlagSet, warn: (m: string) => void): SchedulerConfiguration {
  let c: SchedulerConfiguration;
  if (d.config) {
    let doc: unknown;
    try {
      doc = YAML.parse(readFileSync(d.config, 'utf8'));
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw new Error(err.code === 'ENOENT' ? `open ${d.config}: no such file or directory` : `failed to decode config file "${d.config}": ${err.message}`);
    }
    try {
      c = parseSchedulerConfiguration(doc, warn);
    } catch (e) {
      if (e instanceof ConfigError) throw new Error(`invalid configuration in ${d.config}: ${e.message}`);
      throw e;
    }
    const ignored = ['kubeconfig', 'kube-api-qps', 'kube-api-burst', 'kube-api-content-type', 'lock-object-name', 'lock-object-namespace', 'profiling', 'contention-profiling'].filter((f) => flags.changed(f));
    if (ignored.length) warn(`--config is given: the deprecated flags ${ignored.map((f) => `--${f}`).join(', ')} are ignored`);
  } else {
    c = defaultSchedulerConfiguration();
    c.clientConnection = { ...c.clientConnection, kubeconfig: d.kubeconfig, contentType: d.kubeAPIContentType, qps: d.kubeAPIQPS, burst: d.kubeAPIBurst };
    if (flags.changed('lock-object-name')) c.leaderElection.resourceName = d.lockObjectName;
    if (flags.changed('lock-object-namespace')) c.leaderElection.resourceNamespace = d.lockObjectNamespace;
    c.enableProfiling = d.profiling;
    c.enableContentionProfiling = d.contentionProfiling;
  }
  // the leader election flags given on the command line win (ApplyLeaderElectionTo)
  const le = c.leaderElection;
  if (flags.changed('leader-elect')) le.leaderElect = d.leaderElect;
  if (flags.changed('leader-elect-lease-duration')) le.leaseDurationMs = d.leaseDurationMs;
  if (flags.changed('leader-elect-renew-deadline')) le.renewDeadlineMs = d.renewDeadlineMs;
  if (flags.changed('leader-elect-retry-period')) le.retryPeriodMs = d.retryPeriodMs;
  if (flags.changed('leader-elect-resource-lock')) le.resourceLock = d.resourceLock;
  if (flags.changed('leader-elect-resource-name')) le.resourceName = d.resourceName;
  if (flags.changed('leader-elect-resource-namespace')) le.resourceNamespace = d.resourceNamespace;
  return c;
}

function validate(c: SchedulerConfiguration, d: SchedulerFlags, flags: FlagSet): string[] {
  const errs: string[] = [];
  const le = c.leaderElection;
  if (le.leaderElect) {
    if (le.leaseDurationMs <= 0) errs.push('leaderElection.leaseDuration: Invalid value: must be greater than zero');
    if (le.renewDeadlineMs <= 0) errs.push('leaderElection.renewDeadline: Invalid value: must be greater than zero');
    if (le.retryPeriodMs <= 0) errs.push('leaderElection.retryPeriod: Invalid value: must be greater than zero');
    if (le.leaseDurationMs <= le.renewDeadlineMs) errs.push(`leaderElection.leaseDuration: Invalid value: "${formatDuration(le.leaseDurationMs)}": LeaseDuration must be greater than RenewDeadline`);
    if (le.resourceLock !== 'leases') errs.push(`leaderElection.resourceLock: Unsupported value: "${le.resourceLock}": Keelson elects on Leases only ("leases")`);
    if (!le.resourceName) errs.push('leaderElection.resourceName: Required value');
    if (!le.resourceNamespace) errs.push('leaderElection.resourceNamespace: Required value');
  }
  const ct = d.config ? c.clientConnection.contentType : d.kubeAPIContentType;
  if ((d.config || flags.changed('kube-api-content-type')) && ct && !['application/json', 'application/vnd.kubernetes.protobuf'].includes(ct)) {
    errs.push(`clientConnection.contentType: unsupported content type "${ct}": application/json or application/vnd.kubernetes.protobuf`);
  }
  if (d.podMaxInUnschedulablePodsDurationMs <= 0) errs.push('--pod-max-in-unschedulable-pods-duration must be greater than zero');
  return errs;
}

/** --write-config-to: the configuration in effect, as a v1 KubeSchedulerConfiguration */
function configDocument(c: SchedulerConfiguration): unknown {
  const le = c.leaderElection;
  return {
    apiVersion: 'kubescheduler.config.k8s.io/v1',
    kind: 'KubeSchedulerConfiguration',
    clientConnection: { acceptContentTypes: c.clientConnection.acceptContentTypes, burst: c.clientConnection.burst, contentType: c.clientConnection.contentType, kubeconfig: c.clientConnection.kubeconfig, qps: c.clientConnection.qps },
    enableContentionProfiling: c.enableContentionProfiling,
    enableProfiling: c.enableProfiling,
    leaderElection: {
      leaderElect: le.leaderElect,
      leaseDuration: formatDuration(le.leaseDurationMs),
      renewDeadline: formatDuration(le.renewDeadlineMs),
      resourceLock: le.resourceLock,
      resourceName: le.resourceName,
      resourceNamespace: le.resourceNamespace,
      retryPeriod: formatDuration(le.retryPeriodMs),
    },
    parallelism: c.parallelism,
    ...(c.percentageOfNodesToScore !== undefined ? { percentageOfNodesToScore: c.percentageOfNodesToScore } : {}),
    podInitialBackoffSeconds: c.podInitialBackoffSeconds,
    podMaxBackoffSeconds: c.podMaxBackoffSeconds,
    profiles: c.profiles.map((p) => ({
      schedulerName: p.schedulerName,
      ...(p.percentageOfNodesToScore !== undefined ? { percentageOfNodesToScore: p.percentageOfNodesToScore } : {}),
      pluginConfig: [
        { name: 'NodeResourcesBalancedAllocation', args: { apiVersion: 'kubescheduler.config.k8s.io/v1', kind: 'NodeResourcesBalancedAllocationArgs', resources: p.scoring.balancedResources } },
        { name: 'NodeResourcesFit', args: { apiVersion: 'kubescheduler.config.k8s.io/v1', kind: 'NodeResourcesFitArgs', scoringStrategy: { type: p.scoring.fitStrategy, resources: p.scoring.fitResources } } },
      ],
      plugins: {
        multiPoint: {
          enabled: [
            ...[...p.filters].map((name) => ({ name, ...(name in p.scoring.weights && (p.scoring.weights as any)[name] ? { weight: (p.scoring.weights as any)[name] } : {}) })),
            ...Object.entries(p.scoring.weights)
              .filter(([name, w]) => w > 0 && !p.filters.has(name as any))
              .map(([name, weight]) => ({ name, weight })),
            ...(p.preemption ? [{ name: 'DefaultPreemption' }] : []),
            { name: 'PrioritySort' },
            { name: 'SchedulingGates' },
            { name: 'DefaultBinder' },
          ],
        },
      },
    })),
  };
}

async function restFor(kubeconfig: string, master: string): Promise<RESTConfig> {
  return restConfigFromConnection(await loadKubeconfig({ explicitPath: kubeconfig || undefined, kubeconfigEnv: kubeconfig ? undefined : '', server: master || undefined }));
}

async function run(d: SchedulerFlags, serving: ReturnType<typeof defaultSecureServingFlags>, authFlags: ReturnType<typeof defaultDelegatedAuthFlags>, gate: FeatureGate, flags: FlagSet): Promise<void> {
  const lerrs = klog.validateAndApply(gate);
  if (lerrs.length) throw new Error(lerrs.join('; '));
  const log = daemonLogger();
  const warnings: string[] = [];
  const c = buildConfiguration(d, flags, (m) => warnings.push(m));
  const errs = validate(c, d, flags);
  if (errs.length) throw new Error(errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
  if (serving.securePort < 0 || serving.securePort > 65535) throw new Error(`--secure-port ${serving.securePort} must be between 0 and 65535, inclusive. 0 for turning off secure port`);
  if (d.writeConfigTo) {
    writeFileSync(d.writeConfigTo, YAML.stringify(configDocument(c), { aliasDuplicateObjects: false }));
    log.info('Wrote configuration', { file: d.writeConfigTo });
    process.exit(0);
  }
  klog.printFlags(flags, 1);
  for (const w of warnings) log.warn(w);
  // profiling: V8's sampling heap profiler runs from the start, as Go's heap sampling does (client/profiling.ts);
  // (kube-scheduler's contention profiling, on by default, has no Node.js counterpart: block and mutex stay empty)
  if (c.enableProfiling) await processProfiler().startHeapSampling();
  log.info('Starting Kubernetes Scheduler', { version: getVersionInfo().gitVersion });
  const kubeconfig = c.clientConnection.kubeconfig;
  if (!kubeconfig && !d.master) log.warn('Neither --kubeconfig nor --master was specified. Using the inClusterConfig. This might not work.');
  let rest: RESTConfig;
  try {
    rest = await restFor(kubeconfig, d.master);
  } catch (e) {
    throw new Error(`unable to load the API server's configuration: ${(e as Error).message}`);
  }
  const agent = userAgent('kube-scheduler');

  // metrics: the process's, the REST client's requests, the leader election's, the scheduler's
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const requests = new client.Counter({ name: 'rest_client_requests_total', help: '[ALPHA] Number of HTTP requests, partitioned by status code, method, and host.', labelNames: ['code', 'host', 'method'], registers: [registry] });
  const host = new URL(rest.server).host;
  rest = { ...rest, onResponse: (r) => requests.inc({ code: String(r.status), host, method: r.verb }) };

  const attemptDuration = new client.Histogram({
    name: 'scheduler_scheduling_attempt_duration_seconds',
    help: '[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)',
    labelNames: ['result', 'profile'],
    buckets: Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i),
    registers: [registry],
  });
  const preemptionAttempts = new client.Counter({ name: 'scheduler_preemption_attempts_total', help: '[STABLE] Total preemption attempts in the cluster till now', registers: [registry] });
  const preemptionVictims = new client.Histogram({ name: 'scheduler_preemption_victims', help: '[STABLE] Number of selected preemption victims', buckets: Array.from({ length: 7 }, (_, i) => 2 ** i), registers: [registry] });
  const le = c.leaderElection;
  const sched = new Scheduler({
    rest,
    observe: {
      attempt: (result, profile, seconds) => attemptDuration.observe({ result, profile }, seconds),
      preemption: (victims) => {
        preemptionAttempts.inc();
        if (victims !== undefined) preemptionVictims.observe(victims);
      },
    },
    userAgent: agent,
    profiles: c.profiles,
    log,
    leaderElect: le.leaderElect ? { leaseDurationMs: le.leaseDurationMs, renewDeadlineMs: le.renewDeadlineMs, retryPeriodMs: le.retryPeriodMs, resourceName: le.resourceName, resourceNamespace: le.resourceNamespace } : false,
    percentageOfNodesToScore: c.percentageOfNodesToScore,
    podInitialBackoffMs: c.podInitialBackoffSeconds * 1000,
    podMaxBackoffMs: c.podMaxBackoffSeconds * 1000,
    podMaxInUnschedulablePodsDurationMs: d.podMaxInUnschedulablePodsDurationMs,
    qps: c.clientConnection.qps,
    burst: c.clientConnection.burst,
    onLostLeadership: () => process.exit(1),
  });
  new client.Gauge({
    name: 'leader_election_master_status',
    help: '[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. \'name\' is the string used to identify the lease. Please make sure to group by name.',
    labelNames: ['name'],
    registers: [registry],
    collect() {
      this.set({ name: le.resourceName }, sched.isLeader() ? 1 : 0);
    },
  });
  new client.Gauge({
    name: 'scheduler_pending_pods',
    help: "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
    labelNames: ['queue'],
    registers: [registry],
    collect() {
      const p = sched.metrics().pendingPods;
      for (const [queue, n] of Object.entries(p)) this.set({ queue }, n);
    },
  });
  new client.Counter({
    name: 'scheduler_schedule_attempts_total',
    help: '[STABLE] Number of attempts to schedule pods, by the result. \'unschedulable\' means a pod could not be scheduled, while \'error\' means an internal scheduler problem.',
    labelNames: ['result', 'profile'],
    registers: [registry],
    collect() {
      this.reset();
      for (const a of sched.metrics().attempts) this.inc({ result: a.result, profile: a.profile }, a.count);
    },
  });
  for (const name of d.disabledMetrics) registry.removeSingleMetric(name);

  // /healthz and /livez: ping, log, leaderElection; /readyz adds sched-handler-sync and shutdown
  let shuttingDown = false;
  const live: HealthCheck[] = [
    { name: 'ping', check: () => undefined },
    { name: 'log', check: () => undefined },
  ];
  if (le.leaderElect) live.push({ name: 'leaderElection', check: () => sched.leaderElectionHealth() });
  const health = new Health(
    [
      ...live,
      { name: 'sched-handler-sync', readyOnly: true, check: () => (sched.handlersSynced() ? undefined : 'waiting for handlers to sync') },
      { name: 'shutdown', readyOnly: true, check: () => (shuttingDown ? 'process is shutting down' : undefined) },
    ],
    0,
  );
  const auth = await DelegatedAuth.build(authFlags, (k) => restFor(k, ''), log, agent);
  const listener = await serveComponent(
    serving,
    PAIR_NAME,
    auth,
    async (req, res, path, query) => {
      if (await health.handle(req, res, path, query)) return true;
      if (c.enableProfiling && (await serveDebugPprof(req, res, path, query, { bare: 'redirect' }))) return true;
      if (c.enableProfiling && (await serveDebugFlags(req, res, path, (v) => klog.configure({ verbosity: v }), { index: true }))) return true;
      return serveComponentMetrics(res, path, registry, health);
    },
    log,
  );
  if (listener) klog.log.infof('Serving securely on %s', listener.address);
  sched.start();
  log.info('Started the scheduler', { identity: sched.identity, leaderElect: le.leaderElect, profiles: sched.schedulerNames(), server: rest.server });

  exitComponentOnSignals(log, async () => {
    shuttingDown = true;
    await sched.stop();
  }, listener);
  await new Promise(() => {});
}
