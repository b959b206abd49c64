// Scheduling profiles and kube-scheduler's configuration file (KubeSchedulerConfiguration,
// kubescheduler.config.k8s.io/v1), as far as Keelson's scheduler can honour it.
//
// A profile is a scheduler name with its plugins: Keelson has the filters and scores listed in
// framework.ts. A profile may disable any default plugin (those Keelson lacks are absent anyway),
// change the weights of the score plugins it has, and set NodeResourcesFit's scoring strategy
// (LeastAllocated or MostAllocated, with its resources) and BalancedAllocation's resources.
// VolumeBinding is a filter (with its PreFilter and PreBind; its args' bindTimeoutSeconds is read).
// What it cannot honour is refused at start-up with the reason: enabling a plugin Keelson does not
// have (the other volume plugins, VolumeBinding as a score plugin, out-of-tree plugins), a RequestedToCapacityRatio strategy, ignored
// resources, NodeAffinity's addedAffinity, PodTopologySpread's own default constraints,
// InterPodAffinity's hardPodAffinityWeight other than 1, disabling the queue sort, the binder or
// the scheduling gates, extenders.
import { parseDuration } from '../cli/flags.js';
import {
  DEFAULT_SCORE_WEIGHTS,
  DEFAULT_SCORING,
  FILTER_PLUGINS,
  SCORE_PLUGINS,
  type FilterPlugin,
  type ResourceSpec,
  type ScorePlugin,
  type ScoringConfig,
} from './framework.js';

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

export interface Profile {
  schedulerName: string;
  /** the profile's percentageOfNodesToScore (undefined: the configuration's) */
  percentageOfNodesToScore?: number;
  filters: ReadonlySet<FilterPlugin>;
  scoring: ScoringConfig;
  /** DefaultPreemption enabled: its PostFilter message follows a FitError's */
  preemption: boolean;
  /** VolumeBinding's bindTimeoutSeconds (default 600): how long its PreBind waits for the claims to be bound */
  bindTimeoutSeconds?: number;
}

export function defaultProfile(schedulerName = DEFAULT_SCHEDULER_NAME): Profile {
  return { schedulerName, filters: new Set(FILTER_PLUGINS), scoring: { ...DEFAULT_SCORING, weights: { ...DEFAULT_SCORE_WEIGHTS } }, preemption: true };
}

export interface LeaderElectionConfig {
  leaderElect: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  resourceLock: string;
  resourceName: string;
  resourceNamespace: string;
}

export function defaultLeaderElection(): LeaderElectionConfig {
  return { leaderElect: true, leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, resourceLock: 'leases', resourceName: 'kube-scheduler', resourceNamespace: 'kube-system' };
}

/** the parts of KubeSchedulerConfiguration Keelson reads */
export interface SchedulerConfiguration {
  clientConnection: { kubeconfig: string; contentType: string; acceptContentTypes: string; qps: number; burst: number };
  leaderElection: LeaderElectionConfig;
  percentageOfNodesToScore?: number;
  podInitialBackoffSeconds: number;
  podMaxBackoffSeconds: number;
  parallelism: number;
  profiles: Profile[];
  /** enableProfiling (default true): /debug/pprof/ on the secure port (client/profiling.ts) */
  enableProfiling: boolean;
  /** enableContentionProfiling (default true): Node.js has no block profiler, /debug/pprof/block stays empty */
  enableContentionProfiling: boolean;
}

export function defaultSchedulerConfiguration(): SchedulerConfiguration {
  return {
    clientConnection: { kubeconfig: '', contentType: 'application/vnd.kubernetes.protobuf', acceptContentTypes: '', qps: 50, burst: 100 },
    leaderElection: defaultLeaderElection(),
    podInitialBackoffSeconds: 1,
    podMaxBackoffSeconds: 10,
    parallelism: 16,
    profiles: [defaultProfile()],
    enableProfiling: true,
    enableContentionProfiling: true,
  };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** the default profile's plugins (1.33) by extension point, and those of them Keelson runs */
const DEFAULT_PLUGINS = new Set([
  'PrioritySort',
  'SchedulingGates',
  'NodeUnschedulable',
  'NodeName',
  'TaintToleration',
  'NodeAffinity',
  'NodePorts',
  'NodeResourcesFit',
  'VolumeRestrictions',
  'NodeVolumeLimits',
  'VolumeBinding',
  'VolumeZone',
  'PodTopologySpread',
  'InterPodAffinity',
  'DefaultPreemption',
  'NodeResourcesBalancedAllocation',
  'ImageLocality',
  'DefaultBinder',
]);
/** plugins that must stay: without them there is no queue order, no gate, no binding */
const REQUIRED_PLUGINS = new Set(['PrioritySort', 'SchedulingGates', 'DefaultBinder']);
const EXTENSION_POINTS = ['multiPoint', 'preEnqueue', 'queueSort', 'preFilter', 'filter', 'postFilter', 'preScore', 'score', 'reserve', 'permit', 'preBind', 'bind', 'postBind'];
/** what each plugin Keelson runs does at each point */
const FILTERS = new Set<string>(FILTER_PLUGINS);
const SCORES = new Set<string>(SCORE_PLUGINS);

const isObject = (v: unknown): v is Record<string, any> => v !== null && typeof v === 'object' && !Array.isArray(v);
const arr = (v: unknown): any[] => (Array.isArray(v) ? v : []);

function durationMs(v: unknown, path: string): number {
  if (typeof v === 'number') return v / 1e6; // (a Duration in JSON may be nanoseconds)
  if (typeof v !== 'string') throw new ConfigError(`${path}: a duration is expected, got ${JSON.stringify(v)}`);
  try {
    return parseDuration(v);
  } catch (e) {
    throw new ConfigError(`${path}: ${(e as Error).message}`);
  }
}

function resourceSpecs(v: unknown, path: string): ResourceSpec[] {
  const out: ResourceSpec[] = [];
  for (const [i, r] of arr(v).entries()) {
    if (!isObject(r) || typeof r.name !== 'string' || !r.name) throw new ConfigError(`${path}[${i}].name: Required value`);
    const weight = r.weight === undefined ? 1 : Number(r.weight);
    if (!Number.isInteger(weight) || weight < 1 || weight > 100) throw new ConfigError(`${path}[${i}].weight: Invalid value: ${r.weight}: resource weight of ${r.name} should be in the range of 1 to 100`);
    out.push({ name: r.name, weight });
  }
  return out;
}

/** one entry of `profiles` */
function parseProfile(p: any, i: number, warn: (m: string) => void): Profile {
  const path = `profiles[${i}]`;
  if (!isObject(p)) throw new ConfigError(`${path}: a profile must be an object`);
  const name = p.schedulerName ?? (i === 0 ? DEFAULT_SCHEDULER_NAME : '');
  if (typeof name !== 'string' || !name) throw new ConfigError(`${path}.schedulerName: Required value`);
  const profile = defaultProfile(name);
  const filters = new Set(profile.filters);
  const weights: Record<ScorePlugin, number> = { ...DEFAULT_SCORE_WEIGHTS };
  let preemption = true;
  if (p.percentageOfNodesToScore !== undefined && p.percentageOfNodesToScore !== null) {
    const pct = Number(p.percentageOfNodesToScore);
    if (!Number.isInteger(pct) || pct < 0 || pct > 100) throw new ConfigError(`${path}.percentageOfNodesToScore: Invalid value: ${p.percentageOfNodesToScore}: not in valid range [0-100]`);
    profile.percentageOfNodesToScore = pct;
  }
  const plugins = p.plugins;
  if (plugins !== undefined && plugins !== null) {
    if (!isObject(plugins)) throw new ConfigError(`${path}.plugins: must be an object`);
    for (const point of Object.keys(plugins)) if (!EXTENSION_POINTS.includes(point)) throw new ConfigError(`${path}.plugins: unknown extension point "${point}"`);
    for (const point of EXTENSION_POINTS) {
      const set = plugins[point];
      if (set === undefined || set === null) continue;
      const where = `${path}.plugins.${point}`;
      for (const d of arr(set.disabled)) {
        const n = String(d?.name ?? '');
        if (n === '*') {
          if (point === 'multiPoint' || point === 'filter') filters.clear();
          if (point === 'multiPoint' || point === 'score') for (const s of SCORE_PLUGINS) weights[s] = 0;
          if (point === 'multiPoint' || point === 'postFilter') preemption = false;
          continue;
        }
        if (REQUIRED_PLUGINS.has(n) && (point === 'multiPoint' || point === 'queueSort' || point === 'bind' || point === 'preEnqueue')) {
          throw new ConfigError(`${where}.disabled: "${n}" cannot be disabled in Keelson's scheduler (it has no other ${point === 'queueSort' ? 'queue sort' : point === 'bind' ? 'binder' : n === 'PrioritySort' ? 'queue sort' : n === 'DefaultBinder' ? 'binder' : 'scheduling gates'} plugin)`);
        }
        if ((point === 'multiPoint' || point === 'filter') && FILTERS.has(n)) filters.delete(n as FilterPlugin);
        if ((point === 'multiPoint' || point === 'score') && SCORES.has(n)) weights[n as ScorePlugin] = 0;
        if ((point === 'multiPoint' || point === 'postFilter') && n === 'DefaultPreemption') preemption = false;
        if (!DEFAULT_PLUGINS.has(n)) warn(`${where}.disabled: "${n}" is not a default plugin: nothing to disable`);
      }
      for (const e of arr(set.enabled)) {
        const n = String(e?.name ?? '');
        if (!DEFAULT_PLUGINS.has(n)) throw new ConfigError(`${where}.enabled: plugin "${n}" is not available in Keelson's scheduler`);
        // (VolumeBinding scores only with the StorageCapacityScoring gate: not here)
        const implemented = (FILTERS.has(n) || SCORES.has(n) || REQUIRED_PLUGINS.has(n) || n === 'DefaultPreemption') && !(n === 'VolumeBinding' && point === 'score');
        if (!implemented) throw new ConfigError(`${where}.enabled: plugin "${n}" is not implemented by Keelson's scheduler (it has ${[...FILTERS, ...SCORES].filter((x, j, a) => a.indexOf(x) === j).join(', ')}); leave it out of the profile`);
        if ((point === 'multiPoint' || point === 'filter') && FILTERS.has(n)) filters.add(n as FilterPlugin);
        if ((point === 'multiPoint' || point === 'score') && SCORES.has(n)) {
          const w = e.weight === undefined || e.weight === null || e.weight === 0 ? DEFAULT_SCORE_WEIGHTS[n as ScorePlugin] || 1 : Number(e.weight);
          if (!Number.isInteger(w) || w < 0 || w > 100) throw new ConfigError(`${where}.enabled[${n}].weight: Invalid value: ${e.weight}: must be in the range [0, 100]`);
          weights[n as ScorePlugin] = w;
        }
        if ((point === 'multiPoint' || point === 'postFilter') && n === 'DefaultPreemption') preemption = true;
      }
    }
  }
  const scoring: ScoringConfig = { ...DEFAULT_SCORING, weights };
  let bindTimeoutSeconds: number | undefined;
  for (const [j, pc] of arr(p.pluginConfig).entries()) {
    const where = `${path}.pluginConfig[${j}]`;
    const n = String(pc?.name ?? '');
    const args = isObject(pc?.args) ? pc.args : {};
    switch (n) {
      case 'NodeResourcesFit': {
        if (arr(args.ignoredResources).length || arr(args.ignoredResourceGroups).length) throw new ConfigError(`${where}.args: ignoredResources and ignoredResourceGroups are not supported by Keelson's scheduler`);
        const st = args.scoringStrategy;
        if (isObject(st)) {
          const type = st.type ?? 'LeastAllocated';
          if (type !== 'LeastAllocated' && type !== 'MostAllocated') throw new ConfigError(`${where}.args.scoringStrategy.type: Unsupported value: "${type}": Keelson's scheduler supports "LeastAllocated" and "MostAllocated"`);
          scoring.fitStrategy = type;
          if (st.resources !== undefined) scoring.fitResources = resourceSpecs(st.resources, `${where}.args.scoringStrategy.resources`);
          if (st.requestedToCapacityRatio !== undefined && st.requestedToCapacityRatio !== null) throw new ConfigError(`${where}.args.scoringStrategy.requestedToCapacityRatio: not supported by Keelson's scheduler`);
        }
        break;
      }
      case 'NodeResourcesBalancedAllocation':
        if (args.resources !== undefined) scoring.balancedResources = resourceSpecs(args.resources, `${where}.args.resources`);
        break;
      case 'NodeAffinity':
        if (args.addedAffinity !== undefined && args.addedAffinity !== null) throw new ConfigError(`${where}.args.addedAffinity: not supported by Keelson's scheduler`);
        break;
      case 'DefaultPreemption':
        // (no preemption happens: its candidates' numbers change nothing)
        break;
      case 'PodTopologySpread':
        // (the system defaults, as kube-scheduler's defaultingType System)
        if (arr(args.defaultConstraints).length || (args.defaultingType !== undefined && args.defaultingType !== 'System')) {
          throw new ConfigError(`${where}.args: only defaultingType System (the system default constraints) is supported by Keelson's scheduler`);
        }
        break;
      case 'InterPodAffinity':
        if (args.hardPodAffinityWeight !== undefined && args.hardPodAffinityWeight !== null && Number(args.hardPodAffinityWeight) !== 1) {
          throw new ConfigError(`${where}.args.hardPodAffinityWeight: only the default, 1, is supported by Keelson's scheduler`);
        }
        if (args.ignorePreferredTermsOfExistingPods === true) throw new ConfigError(`${where}.args.ignorePreferredTermsOfExistingPods: not supported by Keelson's scheduler`);
        break;
      case 'VolumeBinding': {
        // VolumeBindingArgs: bindTimeoutSeconds (how long PreBind waits for the PV controller); shape is for scoring
        if (args.bindTimeoutSeconds !== undefined && args.bindTimeoutSeconds !== null) {
          const t = Number(args.bindTimeoutSeconds);
          if (!Number.isInteger(t) || t < 0) throw new ConfigError(`${where}.args.bindTimeoutSeconds: Invalid value: ${args.bindTimeoutSeconds}: invalid BindTimeoutSeconds, should not be a negative value`);
          bindTimeoutSeconds = t;
        }
        if (arr(args.shape).length) warn(`${where}.args.shape: Keelson's scheduler does not score volumes: shape has no effect`);
        break;
      }
      default:
        throw new ConfigError(`${where}.name: plugin "${n}" has no configuration Keelson's scheduler can honour`);
    }
  }
  return { ...profile, filters, scoring, preemption, ...(bindTimeoutSeconds !== undefined ? { bindTimeoutSeconds } : {}) };
}

/**
 * A KubeSchedulerConfiguration document (already parsed from YAML or JSON) with v1's defaults
 * for what it leaves out. Throws ConfigError for what Keelson cannot honour or what kube-scheduler
 * would reject; `warn` hears about what is accepted without effect.
 */
export function parseSchedulerConfiguration(doc: unknown, warn: (m: string) => void = () => {}): SchedulerConfiguration {
  if (!isObject(doc)) throw new ConfigError('the configuration must be an object');
  if (doc.kind !== 'KubeSchedulerConfiguration') throw new ConfigError(`unexpected kind ${JSON.stringify(doc.kind ?? '')}: want KubeSchedulerConfiguration`);
  if (doc.apiVersion !== 'kubescheduler.config.k8s.io/v1') throw new ConfigError(`no kind "KubeSchedulerConfiguration" is registered for version ${JSON.stringify(doc.apiVersion ?? '')}: Keelson reads kubescheduler.config.k8s.io/v1`);
  const known = new Set(['apiVersion', 'kind', 'parallelism', 'leaderElection', 'clientConnection', 'healthzBindAddress', 'metricsBindAddress', 'enableProfiling', 'enableContentionProfiling', 'percentageOfNodesToScore', 'podInitialBackoffSeconds', 'podMaxBackoffSeconds', 'profiles', 'extenders', 'delayCacheUntilActive', 'debuggingConfiguration']);
  for (const k of Object.keys(doc)) if (!known.has(k)) throw new ConfigError(`strict decoding error: unknown field "${k}"`);
  const c = defaultSchedulerConfiguration();
  if (doc.parallelism !== undefined) {
    c.parallelism = Number(doc.parallelism);
    if (!Number.isInteger(c.parallelism) || c.parallelism <= 0) throw new ConfigError(`parallelism: Invalid value: ${doc.parallelism}: should be an integer greater than 0`);
  }
  if (isObject(doc.clientConnection)) {
    const cc = doc.clientConnection;
    if (cc.kubeconfig !== undefined) c.clientConnection.kubeconfig = String(cc.kubeconfig);
    if (cc.contentType !== undefined) c.clientConnection.contentType = String(cc.contentType);
    if (cc.acceptContentTypes !== undefined) c.clientConnection.acceptContentTypes = String(cc.acceptContentTypes);
    if (cc.qps !== undefined) c.clientConnection.qps = Number(cc.qps);
    if (cc.burst !== undefined) c.clientConnection.burst = Number(cc.burst);
  }
  if (isObject(doc.leaderElection)) {
    const le = doc.leaderElection;
    const l = c.leaderElection;
    if (le.leaderElect !== undefined) l.leaderElect = le.leaderElect === true;
    if (le.leaseDuration !== undefined) l.leaseDurationMs = durationMs(le.leaseDuration, 'leaderElection.leaseDuration');
    if (le.renewDeadline !== undefined) l.renewDeadlineMs = durationMs(le.renewDeadline, 'leaderElection.renewDeadline');
    if (le.retryPeriod !== undefined) l.retryPeriodMs = durationMs(le.retryPeriod, 'leaderElection.retryPeriod');
    if (le.resourceLock !== undefined) l.resourceLock = String(le.resourceLock);
    if (le.resourceName !== undefined) l.resourceName = String(le.resourceName);
    if (le.resourceNamespace !== undefined) l.resourceNamespace = String(le.resourceNamespace);
  }
  if (doc.percentageOfNodesToScore !== undefined && doc.percentageOfNodesToScore !== null) {
    const pct = Number(doc.percentageOfNodesToScore);
    if (!Number.isInteger(pct) || pct < 0 || pct > 100) throw new ConfigError(`percentageOfNodesToScore: Invalid value: ${doc.percentageOfNodesToScore}: not in valid range [0-100]`);
    c.percentageOfNodesToScore = pct;
  }
  if (doc.podInitialBackoffSeconds !== undefined) c.podInitialBackoffSeconds = Number(doc.podInitialBackoffSeconds);
  if (doc.podMaxBackoffSeconds !== undefined) c.podMaxBackoffSeconds = Number(doc.podMaxBackoffSeconds);
  if (!(c.podInitialBackoffSeconds > 0)) throw new ConfigError(`podInitialBackoffSeconds: Invalid value: ${c.podInitialBackoffSeconds}: must be greater than 0`);
  if (c.podMaxBackoffSeconds < c.podInitialBackoffSeconds) throw new ConfigError(`podMaxBackoffSeconds: Invalid value: ${c.podMaxBackoffSeconds}: must be greater than or equal to PodInitialBackoffSeconds`);
  if (arr(doc.extenders).length) throw new ConfigError('extenders: scheduler extenders are not supported by Keelson\'s scheduler');
  for (const k of ['enableProfiling', 'enableContentionProfiling'] as const) {
    if (doc[k] === undefined || doc[k] === null) continue;
    const v = doc[k];
    if (typeof v !== 'boolean') throw new ConfigError(`json: cannot unmarshal ${Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v} into Go struct field KubeSchedulerConfiguration.${k} of type bool`);
    c[k] = v;
  }
  if (doc.profiles !== undefined && doc.profiles !== null) {
    const profiles = arr(doc.profiles);
    if (!profiles.length) throw new ConfigError('profiles: Required value');
    c.profiles = profiles.map((p, i) => parseProfile(p, i, warn));
    const seen = new Set<string>();
    for (const [i, p] of c.profiles.entries()) {
      if (seen.has(p.schedulerName)) throw new ConfigError(`profiles[${i}].schedulerName: Duplicate value: "${p.schedulerName}"`);
      seen.add(p.schedulerName);
    }
  }
  if (c.leaderElection.leaderElect && c.leaderElection.resourceLock !== 'leases') throw new ConfigError(`leaderElection.resourceLock: Unsupported value: "${c.leaderElection.resourceLock}": Keelson elects on Leases only ("leases")`);
  return c;
}
