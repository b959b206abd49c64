// API Priority and Fairness configuration objects, as kube-apiserver 1.33 keeps them: the
// mandatory and suggested PriorityLevelConfigurations and FlowSchemas (post-start hook
// priority-and-fairness-config-producer), and each FlowSchema's Dangling condition (whether the
// priority level it names exists), which kube-apiserver's APF configuration controller writes.
// Keelson does not classify or queue requests by them (its --max-requests-inflight limits stand
// in); the objects are what clients and operators read and edit.
import { rfc3339 } from '../machinery/time.js';
import { lostRace } from './apiservices.js';
import type { ResourceStore } from './registry/store.js';
import { CacheFollower } from './cachefollower.js';

const GROUP_VERSION = 'flowcontrol.apiserver.k8s.io/v1';
/** the annotation that lets the server keep an object's spec at the bootstrap one */
export const AUTO_UPDATE_ANNOTATION = 'apf.kubernetes.io/autoupdate-spec';

// ---- the configuration (the values of Kubernetes 1.33's bootstrap configuration) ----

/** a Limited priority level: nominal shares, lendable percent, and its queues (none: Reject) */
interface LimitedLevel {
  shares: number;
  lendable: number;
  /** queues, hand size, queue length limit */
  queuing?: [number, number, number];
}

const LEVELS: [string, LimitedLevel | 'Exempt'][] = [
  // mandatory
  ['catch-all', { shares: 5, lendable: 0 }],
  ['exempt', 'Exempt'],
  // suggested
  ['system', { shares: 30, lendable: 33, queuing: [64, 6, 50] }],
  ['node-high', { shares: 40, lendable: 25, queuing: [64, 6, 50] }],
  ['leader-election', { shares: 10, lendable: 0, queuing: [16, 4, 50] }],
  ['workload-high', { shares: 40, lendable: 50, queuing: [128, 6, 50] }],
  ['workload-low', { shares: 100, lendable: 90, queuing: [128, 6, 50] }],
  ['global-default', { shares: 20, lendable: 50, queuing: [128, 6, 50] }],
];

type Subject = { kind: 'Group'; group: { name: string } } | { kind: 'User'; user: { name: string } } | { kind: 'ServiceAccount'; serviceAccount: { namespace: string; name: string } };
const group = (name: string): Subject => ({ kind: 'Group', group: { name } });
const user = (name: string): Subject => ({ kind: 'User', user: { name } });
const kubeSystemSA = (name: string): Subject => ({ kind: 'ServiceAccount', serviceAccount: { namespace: 'kube-system', name } });

/** a resource rule: verbs, API groups, resources, and cluster scope with every namespace or the namespaces only */
const resources = (verbs: string[], apiGroups: string[], res: string[], clusterScope: boolean) => ({
  verbs,
  apiGroups,
  resources: res,
  ...(clusterScope ? { clusterScope: true } : {}),
  namespaces: ['*'],
});
const nonResources = (verbs: string[], urls: string[]) => ({ verbs, nonResourceURLs: urls });
const EVERYTHING = { resourceRules: [resources(['*'], ['*'], ['*'], true)], nonResourceRules: [nonResources(['*'], ['*'])] };

interface Schema {
  name: string;
  level: string;
  precedence: number;
  distinguisher?: 'ByUser' | 'ByNamespace';
  subjects: Subject[];
  rules: { resourceRules?: unknown[]; nonResourceRules?: unknown[] };
}

const SCHEMAS: Schema[] = [
  // mandatory
  { name: 'exempt', level: 'exempt', precedence: 1, subjects: [group('system:masters')], rules: EVERYTHING },
  { name: 'catch-all', level: 'catch-all', precedence: 10000, distinguisher: 'ByUser', subjects: [group('system:unauthenticated'), group('system:authenticated')], rules: EVERYTHING },
  // suggested
  { name: 'system-nodes', level: 'system', precedence: 500, distinguisher: 'ByUser', subjects: [group('system:nodes')], rules: EVERYTHING },
  {
    name: 'system-node-high',
    level: 'node-high',
    precedence: 400,
    distinguisher: 'ByUser',
    subjects: [group('system:nodes')],
    rules: { resourceRules: [resources(['*'], [''], ['nodes', 'nodes/status'], true), resources(['*'], ['coordination.k8s.io'], ['leases'], false)] },
  },
  {
    name: 'probes',
    level: 'exempt',
    precedence: 2,
    subjects: [group('system:unauthenticated'), group('system:authenticated')],
    rules: { nonResourceRules: [nonResources(['get'], ['/healthz', '/readyz', '/livez'])] },
  },
  {
    name: 'system-leader-election',
    level: 'leader-election',
    precedence: 100,
    distinguisher: 'ByUser',
    subjects: [user('system:kube-controller-manager'), user('system:kube-scheduler'), kubeSystemSA('*')],
    rules: { resourceRules: [resources(['get', 'create', 'update'], ['coordination.k8s.io'], ['leases'], false)] },
  },
  {
    name: 'workload-leader-election',
    level: 'leader-election',
    precedence: 200,
    distinguisher: 'ByUser',
    subjects: [kubeSystemSA('*')],
    rules: {
      resourceRules: [resources(['get', 'create', 'update'], [''], ['endpoints', 'configmaps'], false), resources(['get', 'create', 'update'], ['coordination.k8s.io'], ['leases'], false)],
    },
  },
  {
    name: 'endpoint-controller',
    level: 'workload-high',
    precedence: 150,
    distinguisher: 'ByUser',
    subjects: [user('system:kube-controller-manager'), kubeSystemSA('endpoint-controller'), kubeSystemSA('endpointslicemirroring-controller')],
    rules: { resourceRules: [resources(['get', 'create', 'update'], [''], ['endpoints'], false)] },
  },
  { name: 'kube-controller-manager', level: 'workload-high', precedence: 800, distinguisher: 'ByNamespace', subjects: [user('system:kube-controller-manager')], rules: EVERYTHING },
  { name: 'kube-scheduler', level: 'workload-high', precedence: 800, distinguisher: 'ByNamespace', subjects: [user('system:kube-scheduler')], rules: EVERYTHING },
  { name: 'kube-system-service-accounts', level: 'workload-high', precedence: 900, distinguisher: 'ByNamespace', subjects: [kubeSystemSA('*')], rules: EVERYTHING },
  { name: 'service-accounts', level: 'workload-low', precedence: 9000, distinguisher: 'ByUser', subjects: [group('system:serviceaccounts')], rules: EVERYTHING },
  { name: 'global-default', level: 'global-default', precedence: 9900, distinguisher: 'ByUser', subjects: [group('system:unauthenticated'), group('system:authenticated')], rules: EVERYTHING },
];

function levelObject(name: string, l: LimitedLevel | 'Exempt'): any {
  const spec =
    l === 'Exempt'
      ? { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } }
      : {
          type: 'Limited',
          limited: {
            nominalConcurrencyShares: l.shares,
            limitResponse: l.queuing ? { type: 'Queue', queuing: { queues: l.queuing[0], handSize: l.queuing[1], queueLengthLimit: l.queuing[2] } } : { type: 'Reject' },
            lendablePercent: l.lendable,
          },
        };
  return { apiVersion: GROUP_VERSION, kind: 'PriorityLevelConfiguration', metadata: { name, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } }, spec };
}

function schemaObject(s: Schema): any {
  return {
    apiVersion: GROUP_VERSION,
    kind: 'FlowSchema',
    metadata: { name: s.name, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } },
    spec: {
      priorityLevelConfiguration: { name: s.level },
      matchingPrecedence: s.precedence,
      ...(s.distinguisher ? { distinguisherMethod: { type: s.distinguisher } } : {}),
      rules: [{ subjects: s.subjects, ...s.rules }],
    },
  };
}

// ---- keeping them ----

/** the operations of the two stores the bootstrap needs */
export interface ConfigStore {
  get(name: string): any | undefined;
  list(): any[];
  create(obj: any): Promise<unknown>;
  /** replace the object's spec (the current object is passed to `change`) */
  update(name: string, change: (cur: any) => any): Promise<unknown>;
  updateStatus(name: string, change: (cur: any) => any): Promise<unknown>;
}

/**
 * Creates the configuration objects that are missing, and brings back to the bootstrap spec those
 * whose auto-update annotation is "true" (priority levels first, as the flow schemas name them).
 */
export async function ensureFlowControlConfiguration(levels: ConfigStore, schemas: ConfigStore): Promise<void> {
  const ensure = async (store: ConfigStore, want: any) => {
    const cur = store.get(want.metadata.name);
    try {
      if (!cur) await store.create(want);
      else if (cur.metadata?.annotations?.[AUTO_UPDATE_ANNOTATION] === 'true' && JSON.stringify(cur.spec) !== JSON.stringify(want.spec)) {
        await store.update(want.metadata.name, (o) => ({ ...o, spec: want.spec }));
      }
    } catch (e) {
      if (!lostRace(e)) throw e;
    }
  };
  // (together: the writes share the storage's group commits)
  await Promise.all(LEVELS.map(([name, l]) => ensure(levels, levelObject(name, l))));
  await Promise.all(SCHEMAS.map((s) => ensure(schemas, schemaObject(s))));
}

/** the Dangling condition a FlowSchema should carry, given the priority levels that exist */
export function danglingCondition(fs: any, levelExists: (name: string) => boolean): { status: string; reason: string; message: string } {
  const pl = String(fs.spec?.priorityLevelConfiguration?.name ?? '');
  return levelExists(pl)
    ? { status: 'False', reason: 'Found', message: `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(pl)} and it exists` }
    : { status: 'True', reason: 'NotFound', message: `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(pl)} but there is no such object` };
}

/** writes each FlowSchema's Dangling condition where it is missing or out of date */
export async function syncDanglingConditions(levels: ConfigStore, schemas: ConfigStore): Promise<void> {
  const exists = (name: string) => levels.get(name) !== undefined;
  await Promise.all(
    schemas.list().map(async (fs) => {
      const want = danglingCondition(fs, exists);
      const conds: any[] = Array.isArray(fs.status?.conditions) ? fs.status.conditions : [];
      const have = conds.find((c) => c?.type === 'Dangling');
      if (have && have.status === want.status && have.reason === want.reason && have.message === want.message) return;
      try {
        await schemas.updateStatus(fs.metadata.name, (o) => {
          const rest = (Array.isArray(o.status?.conditions) ? o.status.conditions : []).filter((c: any) => c?.type !== 'Dangling');
          const cond = { type: 'Dangling', status: want.status, lastTransitionTime: rfc3339(Date.now()), reason: want.reason, message: want.message };
          o.status = { ...(o.status ?? {}), conditions: [...rest, cond] };
          return o;
        });
      } catch (e) {
        if (!lostRace(e)) throw e;
      }
    }),
  );
}

/** a store's operations for the configuration */
export function configStore(st: ResourceStore): ConfigStore {
  return {
    get: (name) => st.get('', name)?.obj,
    list: () => st.cacher.list({ prefix: st.prefix }).items.map((e) => e.obj),
    create: (obj) => st.create(obj, { dryRun: false }),
    update: (name, change) => st.guaranteedUpdate('', name, change, { dryRun: false }),
    updateStatus: (name, change) => st.guaranteedUpdate('', name, change, { dryRun: false, main: false, subresource: 'status' }),
  };
}

/**
 * The configuration at start (the producer's post-start hook waits for it), then the Dangling
 * conditions kept as FlowSchemas and priority levels come and go: each change of either is
 * followed by one pass over the FlowSchemas (changes that come together share it).
 */
export class FlowControlConfig {
  produced = false;
  private readonly follower: CacheFollower;

  constructor(
    private readonly levels: ResourceStore,
    private readonly schemas: ResourceStore,
    onError: (e: unknown) => void,
  ) {
    this.follower = new CacheFollower([levels, schemas], () => syncDanglingConditions(configStore(this.levels), configStore(this.schemas)), onError);
  }

  async start(): Promise<void> {
    await ensureFlowControlConfiguration(configStore(this.levels), configStore(this.schemas));
    this.produced = true;
    await syncDanglingConditions(configStore(this.levels), configStore(this.schemas));
    this.follower.start();
  }

  stop(): void {
    this.follower.stop();
  }
}
