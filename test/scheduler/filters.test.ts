// The scheduler's filters, scores and messages with hand-made nodes and pods (no server).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  balancedAllocationSkips,
  defaultNormalizeScore,
  DEFAULT_SCORING,
  ERR_NODE_AFFINITY,
  FILTER_PLUGINS,
  filterNodeAffinity,
  filterNodeName,
  filterNodePorts,
  filterNodeResourcesFit,
  filterNodeUnschedulable,
  filterTaintToleration,
  fitErrorMessage,
  imageStates,
  newNodeInfo,
  newPodInfo,
  nodeAffinityPreFilter,
  numFeasibleNodesToFind,
  podRequests,
  runNodeFilters,
  runPodFilters,
  scoreBalancedAllocation,
  scoreImageLocality,
  scoreNodeAffinity,
  scoreNodeResourcesFit,
  scoreNodes,
  scoreTaintToleration,
  selectHost,
  summarizePod,
  type NodeInfo,
  type Status,
} from '../../src/scheduler/framework.js';
import { ConfigError, parseSchedulerConfiguration } from '../../src/scheduler/config.js';
import { findPreemption } from '../../src/scheduler/preemption.js';
import { SchedulingQueue } from '../../src/scheduler/queue.js';
import { nodeSchedulingPropertiesChanged } from '../../src/scheduler/scheduler.js';

const ALL = new Set(FILTER_PLUGINS);

function node(name: string, o: { labels?: Record<string, string>; taints?: any[]; unschedulable?: boolean; cpu?: string; memory?: string; pods?: string; extra?: Record<string, string>; images?: any[] } = {}): any {
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(o.labels ?? {}) } },
    spec: { ...(o.taints ? { taints: o.taints } : {}), ...(o.unschedulable ? { unschedulable: true } : {}) },
    status: { allocatable: { cpu: o.cpu ?? '4', memory: o.memory ?? '8Gi', pods: o.pods ?? '110', ...(o.extra ?? {}) }, ...(o.images ? { images: o.images } : {}) },
  };
}

function pod(name: string, spec: Record<string, any> = {}, containers: any[] = [{ name: 'c', image: 'busybox' }]): any {
  return { metadata: { name, namespace: 'default', uid: `uid-${name}` }, spec: { containers, ...spec } };
}

const req = (cpu?: string, memory?: string, extra: Record<string, string> = {}) => ({ name: 'c', image: 'busybox', resources: { requests: { ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}), ...extra } } });

test('NodeName: only the named node fits', () => {
  assert.equal(filterNodeName(pod('p'), node('a')), undefined);
  assert.equal(filterNodeName(pod('p', { nodeName: 'a' }), node('a')), undefined);
  assert.deepEqual(filterNodeName(pod('p', { nodeName: 'a' }), node('b'))?.reasons, ["node(s) didn't match the requested node name"]);
});

test('NodeUnschedulable: a cordoned node, unless the pod tolerates node.kubernetes.io/unschedulable', () => {
  const s = filterNodeUnschedulable(pod('p'), node('a', { unschedulable: true }));
  assert.deepEqual(s, { code: 'UnschedulableAndUnresolvable', reasons: ['node(s) were unschedulable'], plugin: 'NodeUnschedulable' });
  assert.equal(filterNodeUnschedulable(pod('p', { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }), node('a', { unschedulable: true })), undefined);
  assert.equal(filterNodeUnschedulable(pod('p', { tolerations: [{ operator: 'Exists' }] }), node('a', { unschedulable: true })), undefined);
  assert.equal(filterNodeUnschedulable(pod('p'), node('a')), undefined);
});

test('TaintToleration: NoSchedule and NoExecute taints need a toleration; PreferNoSchedule does not', () => {
  const tainted = node('a', { taints: [{ key: 'soft', effect: 'PreferNoSchedule' }, { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, { key: 'x', effect: 'NoExecute' }] });
  assert.deepEqual(filterTaintToleration(pod('p'), tainted)?.reasons, ['node(s) had untolerated taint {dedicated: gpu}']);
  // Equal with the right value, then the NoExecute one is next
  assert.deepEqual(filterTaintToleration(pod('p', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] }), tainted)?.reasons, ['node(s) had untolerated taint {x: }']);
  // a wrong value does not tolerate
  assert.ok(filterTaintToleration(pod('p', { tolerations: [{ key: 'dedicated', value: 'cpu' }, { key: 'x', operator: 'Exists' }] }), tainted));
  // Exists on the key; an empty effect tolerates every effect
  assert.equal(filterTaintToleration(pod('p', { tolerations: [{ key: 'dedicated', operator: 'Exists' }, { key: 'x', operator: 'Exists', effect: 'NoExecute' }] }), tainted), undefined);
  // an effect that differs does not tolerate
  assert.ok(filterTaintToleration(pod('p', { tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }, { key: 'x', operator: 'Exists' }] }), tainted));
  // operator Exists with an empty key tolerates everything
  assert.equal(filterTaintToleration(pod('p', { tolerations: [{ operator: 'Exists' }] }), tainted), undefined);
  assert.equal(filterTaintToleration(pod('p'), node('b', { taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] })), undefined);
});

test('NodeAffinity: nodeSelector and required terms with every operator and matchFields', () => {
  const n = node('n1', { labels: { zone: 'a', disk: 'ssd', cores: '8' } });
  const aff = (...terms: any[]) => ({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } } });
  assert.equal(filterNodeAffinity(pod('p', { nodeSelector: { zone: 'a' } }), n), undefined);
  assert.deepEqual(filterNodeAffinity(pod('p', { nodeSelector: { zone: 'b' } }), n)?.reasons, [ERR_NODE_AFFINITY]);
  const ok = (expr: any) => filterNodeAffinity(pod('p', aff({ matchExpressions: [expr] })), n) === undefined;
  assert.ok(ok({ key: 'zone', operator: 'In', values: ['a', 'b'] }));
  assert.ok(!ok({ key: 'zone', operator: 'In', values: ['b'] }));
  assert.ok(ok({ key: 'zone', operator: 'NotIn', values: ['b'] }));
  assert.ok(ok({ key: 'absent', operator: 'NotIn', values: ['b'] }));
  assert.ok(!ok({ key: 'zone', operator: 'NotIn', values: ['a'] }));
  assert.ok(ok({ key: 'disk', operator: 'Exists' }));
  assert.ok(!ok({ key: 'gpu', operator: 'Exists' }));
  assert.ok(ok({ key: 'gpu', operator: 'DoesNotExist' }));
  assert.ok(!ok({ key: 'disk', operator: 'DoesNotExist' }));
  assert.ok(ok({ key: 'cores', operator: 'Gt', values: ['4'] }));
  assert.ok(!ok({ key: 'cores', operator: 'Gt', values: ['8'] }));
  assert.ok(ok({ key: 'cores', operator: 'Lt', values: ['16'] }));
  assert.ok(!ok({ key: 'zone', operator: 'Lt', values: ['16'] }), 'a label that is not an integer matches neither Gt nor Lt');
  // matchFields metadata.name
  assert.equal(filterNodeAffinity(pod('p', aff({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] })), n), undefined);
  assert.ok(filterNodeAffinity(pod('p', aff({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] })), n));
  assert.equal(filterNodeAffinity(pod('p', aff({ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n2'] }] })), n), undefined);
  // terms are ORed, requirements ANDed; an empty term matches nothing
  assert.equal(filterNodeAffinity(pod('p', aff({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] }, { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] })), n), undefined);
  assert.ok(filterNodeAffinity(pod('p', aff({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }, { key: 'disk', operator: 'In', values: ['hdd'] }] })), n));
  assert.ok(filterNodeAffinity(pod('p', aff({})), n));
  // both the nodeSelector and the affinity must match
  assert.ok(filterNodeAffinity(pod('p', { nodeSelector: { zone: 'b' }, ...aff({ matchExpressions: [{ key: 'disk', operator: 'Exists' }] }) }), n));
  // the PreFilter: names from matchFields
  assert.deepEqual(nodeAffinityPreFilter(pod('p', aff({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }, { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n3'] }] }))).names, new Set(['n1', 'n3']));
  assert.deepEqual(nodeAffinityPreFilter(pod('p', aff({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }, { matchExpressions: [{ key: 'zone', operator: 'Exists' }] }))), {});
  assert.deepEqual(nodeAffinityPreFilter(pod('p', aff({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }, { key: 'metadata.name', operator: 'In', values: ['n2'] }] }))), { conflict: true });
});

test('pod requests: max of init containers vs the sum of containers, sidecars, overhead', () => {
  const p = pod(
    'p',
    {
      initContainers: [
        { name: 'i1', image: 'x', resources: { requests: { cpu: '2', memory: '100Mi' } } },
        { name: 'side', image: 'x', restartPolicy: 'Always', resources: { requests: { cpu: '100m' } } },
        { name: 'i2', image: 'x', resources: { requests: { cpu: '1500m' } } },
      ],
      overhead: { cpu: '50m', memory: '10Mi' },
    },
    [req('500m', '200Mi'), req('250m')],
  );
  const r = podRequests(p);
  // containers 750m + sidecar 100m = 850m; init: max(2, 100m + 1500m) = 2 → 2; + 50m overhead
  assert.equal(String(r.get('cpu')!.nano), String(2_050_000_000n));
  // memory: 200Mi vs init 100Mi → 200Mi, + 10Mi
  assert.equal(r.get('memory')!.nano, 210n * 1024n * 1024n * 1_000_000_000n);
  // with the defaults for containers without requests (scoring): the second container has no memory → 200Mi
  const nz = summarizePod(pod('q', {}, [req('100m'), { name: 'b', image: 'x' }]));
  assert.equal(nz.nonZeroCPU, 200n);
  assert.equal(nz.nonZeroMemory, 400n * 1024n * 1024n);
  assert.equal(nz.requests.memory, 0n);
});

test('pod requests with in-place resize: the larger of the spec\'s and the status\' requests; the status\' alone when the resize is infeasible', () => {
  const p = pod('r', {}, [req('500m', '100Mi')]);
  const cpu = (x: any) => String(podRequests(x).get('cpu')!.nano / 1_000_000n);
  // a resize down not yet applied: the status' larger size counts
  p.status = { containerStatuses: [{ name: p.spec.containers[0].name, resources: { requests: { cpu: '800m', memory: '100Mi' } } }] };
  assert.equal(cpu(p), '800');
  // a resize up not yet applied: the spec's
  p.status.containerStatuses[0].resources.requests.cpu = '200m';
  assert.equal(cpu(p), '500');
  // infeasible: what the container has
  p.status.conditions = [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible' }];
  assert.equal(cpu(p), '200');
});

test('NodeResourcesFit: allocatable minus the pods on the node; pods count against allocatable pods', () => {
  const n = node('a', { cpu: '2', memory: '4Gi', pods: '3', extra: { 'example.com/gpu': '1' } });
  const on = [summarizePod(pod('x', {}, [req('1', '1Gi')])), summarizePod(pod('y', {}, [req('500m', '2Gi')]))];
  const info = newNodeInfo(n, on);
  assert.equal(filterNodeResourcesFit(newPodInfo(pod('p', {}, [req('500m', '1Gi')])).requests, info), undefined);
  assert.deepEqual(filterNodeResourcesFit(newPodInfo(pod('p', {}, [req('600m', '1Gi')])).requests, info)?.reasons, ['Insufficient cpu']);
  assert.deepEqual(filterNodeResourcesFit(newPodInfo(pod('p', {}, [req('1', '2Gi')])).requests, info)?.reasons, ['Insufficient cpu', 'Insufficient memory']);
  assert.deepEqual(filterNodeResourcesFit(newPodInfo(pod('p', {}, [req(undefined, undefined, { 'example.com/gpu': '2' })])).requests, info)?.reasons, ['Insufficient example.com/gpu']);
  assert.equal(filterNodeResourcesFit(newPodInfo(pod('p', {}, [req(undefined, undefined, { 'example.com/gpu': '1' })])).requests, info), undefined);
  // a third pod fits the pod count (3), a fourth does not, even without requests
  const full = newNodeInfo(n, [...on, summarizePod(pod('z'))]);
  assert.deepEqual(filterNodeResourcesFit(newPodInfo(pod('p')).requests, full)?.reasons, ['Too many pods']);
  assert.equal(filterNodeResourcesFit(newPodInfo(pod('p')).requests, full)?.code, 'Unschedulable');
});

test('NodePorts: a host port in use on the node (same protocol; 0.0.0.0 against any IP)', () => {
  const port = (hostPort: number, o: Record<string, any> = {}) => ({ name: 'c', image: 'x', ports: [{ containerPort: 80, hostPort, ...o }] });
  const info = newNodeInfo(node('a'), [summarizePod(pod('x', {}, [port(8080)])), summarizePod(pod('y', {}, [port(9090, { hostIP: '10.0.0.1', protocol: 'UDP' })]))]);
  const check = (c: any) => filterNodePorts(newPodInfo(pod('p', {}, [c])).ports, info);
  assert.deepEqual(check(port(8080))?.reasons, ["node(s) didn't have free ports for the requested pod ports"]);
  assert.ok(check(port(8080, { hostIP: '10.0.0.2' })), 'a specific IP conflicts with 0.0.0.0');
  assert.equal(check(port(8080, { protocol: 'UDP' })), undefined);
  assert.equal(check(port(8081)), undefined);
  assert.ok(check(port(9090, { protocol: 'UDP' })), '0.0.0.0 conflicts with any IP');
  assert.equal(check(port(9090, { protocol: 'UDP', hostIP: '10.0.0.3' })), undefined);
  assert.equal(check(port(9090)), undefined, 'TCP is not UDP');
});

test('filters run in order and stop at the first rejection', () => {
  const n = node('a', { unschedulable: true, taints: [{ key: 't', effect: 'NoSchedule' }] });
  assert.equal(runNodeFilters(newPodInfo(pod('p', { nodeSelector: { x: 'y' } })), n, ALL)?.plugin, 'NodeUnschedulable');
  assert.equal(runNodeFilters(newPodInfo(pod('p', { nodeSelector: { x: 'y' } })), n, new Set(['TaintToleration', 'NodeAffinity'] as const))?.plugin, 'TaintToleration');
  assert.equal(runNodeFilters(newPodInfo(pod('p', { nodeSelector: { x: 'y' } })), n, new Set(['NodeAffinity'] as const))?.plugin, 'NodeAffinity');
  const info = newNodeInfo(node('b', { cpu: '1' }), [summarizePod(pod('x', {}, [{ name: 'c', image: 'x', ports: [{ containerPort: 1, hostPort: 80 }], resources: { requests: { cpu: '1' } } }]))]);
  assert.equal(runPodFilters(newPodInfo(pod('p', {}, [{ name: 'c', image: 'x', ports: [{ containerPort: 1, hostPort: 80 }], resources: { requests: { cpu: '1' } } }])), info, ALL)?.plugin, 'NodePorts');
});

test('the FailedScheduling message: sorted counts of every reason, then the preemption part', () => {
  const st = (plugin: string, code: Status['code'], ...reasons: string[]): Status => ({ plugin, code, reasons });
  const statuses = new Map<string, Status>([
    ['a', st('NodeAffinity', 'UnschedulableAndUnresolvable', ERR_NODE_AFFINITY)],
    ['b', st('NodeAffinity', 'UnschedulableAndUnresolvable', ERR_NODE_AFFINITY)],
    ['c', st('NodeResourcesFit', 'Unschedulable', 'Insufficient cpu', 'Insufficient memory')],
    ['d', st('TaintToleration', 'UnschedulableAndUnresolvable', 'node(s) had untolerated taint {dedicated: gpu}')],
  ]);
  assert.equal(
    fitErrorMessage({ numAllNodes: 4, statuses }),
    "0/4 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 node(s) had untolerated taint {dedicated: gpu}, 2 node(s) didn't match Pod's node affinity/selector.",
  );
  // Go's sort.Strings: "10 ..." before "2 ..."
  const many = new Map<string, Status>();
  for (let i = 0; i < 10; i++) many.set(`x${i}`, st('NodeResourcesFit', 'Unschedulable', 'Insufficient memory'));
  for (let i = 0; i < 2; i++) many.set(`y${i}`, st('NodeUnschedulable', 'UnschedulableAndUnresolvable', 'node(s) were unschedulable'));
  assert.equal(fitErrorMessage({ numAllNodes: 12, statuses: many }), '0/12 nodes are available: 10 Insufficient memory, 2 node(s) were unschedulable.');
  // nodes without a status count with the absent status
  assert.equal(
    fitErrorMessage({ numAllNodes: 3, statuses: new Map([['a', st('NodeResourcesFit', 'Unschedulable', 'Too many pods')]]), absent: st('NodeAffinity', 'UnschedulableAndUnresolvable', "node(s) didn't satisfy plugin(s) [NodeAffinity]") }),
    "0/3 nodes are available: 1 Too many pods, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].",
  );
  assert.equal(fitErrorMessage({ numAllNodes: 2, statuses: new Map(), preFilterMsg: 'pod affinity terms conflict', postFilterMsg: 'preemption: x.' }), '0/2 nodes are available: pod affinity terms conflict. preemption: x.');
});

const preemptionOf = (p: ReturnType<typeof newPodInfo>, numAllNodes: number, statuses: Map<string, Status>, infos: Map<string, NodeInfo>, pdbs: any[] = [], meta: Record<string, any> = {}) =>
  findPreemption({ p, numAllNodes, statuses, infos, pdbs, fits: (info) => runNodeFilters(p, info.node, ALL) ?? runPodFilters(p, info, ALL), podMeta: (uid) => meta[uid] });

test('preemption: not helpful, no victims, the filters without the lower-priority pods, or the victims', () => {
  const p = newPodInfo(pod('p', { nodeSelector: { disk: 'ssd' } }, [req('2')]));
  const small = node('small', { cpu: '1', labels: { disk: 'ssd' } });
  const other = node('other', { cpu: '8' });
  const infos = new Map<string, NodeInfo>([['small', newNodeInfo(small)]]);
  const statuses = new Map<string, Status>([
    ['small', runPodFilters(p, infos.get('small')!, ALL)!],
    ['other', runNodeFilters(p, other, ALL)!],
  ]);
  const post = (preemptionOf(p, 2, statuses, infos) as { message: string }).message;
  assert.equal(post, 'preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.');
  assert.equal(
    fitErrorMessage({ numAllNodes: 2, statuses, postFilterMsg: post }),
    "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
  );
  // only unresolvable statuses
  assert.deepEqual(preemptionOf(p, 1, new Map([['other', statuses.get('other')!]]), infos), { message: 'preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.' });
  // preemptionPolicy Never
  assert.deepEqual(preemptionOf(newPodInfo(pod('p', { preemptionPolicy: 'Never' })), 1, statuses, infos), { message: 'preemption: not eligible due to preemptionPolicy=Never.' });
  // a lower-priority pod whose removal would not be enough: the filter's reason again
  const big = newPodInfo(pod('p', { priority: 10 }, [req('4')]));
  const withLow = newNodeInfo(node('n', { cpu: '2' }), [summarizePod(pod('low', { priority: 0 }, [req('1')]))]);
  const s2 = new Map([['n', runPodFilters(big, withLow, ALL)!]]);
  assert.deepEqual(preemptionOf(big, 1, s2, new Map([['n', withLow]])), { message: 'preemption: 0/1 nodes are available: 1 Insufficient cpu.' });
  // ... and one whose removal makes room: the victim, and only what is needed
  const lows = (n: string, specs: [string, number, string, string?][], cpu = '2') =>
    newNodeInfo(
      node(n, { cpu }),
      specs.map(([name, priority, cpu, started]) => {
        const o = pod(name, { priority }, [req(cpu)]);
        o.metadata.uid = `uid-${name}`;
        if (started) o.status = { startTime: started };
        return summarizePod(o);
      }),
    );
  const fits = newPodInfo(pod('p', { priority: 10 }, [req('1500m')]));
  const n1 = lows('n1', [['keep', 20, '500m'], ['a', 0, '1'], ['b', 5, '500m']], '3');
  const s3 = new Map([['n1', runPodFilters(fits, n1, ALL)!]]);
  const r = preemptionOf(fits, 1, s3, new Map([['n1', n1]])) as { candidate: any };
  assert.equal(r.candidate.node, 'n1');
  // (b, the more important, is put back first and fits; a cannot come back)
  assert.deepEqual(r.candidate.victims.map((v: any) => v.key), ['default/a']);
  // the node: fewer budget violations, then the lowest top priority, the lowest sum, fewer victims, the latest start
  const n2 = lows('n2', [['c', 3, '2']]);
  const n3 = lows('n3', [['d', 1, '1'], ['e', 1, '1']]);
  const s4 = new Map([['n2', runPodFilters(fits, n2, ALL)!], ['n3', runPodFilters(fits, n3, ALL)!]]);
  const pick = preemptionOf(fits, 2, s4, new Map([['n2', n2], ['n3', n3]])) as { candidate: any };
  assert.equal(pick.candidate.node, 'n3', 'the lowest highest-priority victim');
  const meta = { 'uid-d': { namespace: 'default', name: 'd', labels: { app: 'd' } }, 'uid-e': { namespace: 'default', name: 'e', labels: { app: 'd' } } };
  const pdb = { metadata: { namespace: 'default' }, spec: { selector: { matchLabels: { app: 'd' } } }, status: { disruptionsAllowed: 0 } };
  const guarded = preemptionOf(fits, 2, s4, new Map([['n2', n2], ['n3', n3]]), [pdb], meta) as { candidate: any };
  assert.equal(guarded.candidate.node, 'n2', 'a budget that would be violated sends it elsewhere');
  const n4 = lows('n4', [['f', 1, '2', '2026-01-01T00:00:00Z']]);
  const n5 = lows('n5', [['g', 1, '2', '2026-01-02T00:00:00Z']]);
  const s5 = new Map([['n4', runPodFilters(fits, n4, ALL)!], ['n5', runPodFilters(fits, n5, ALL)!]]);
  assert.equal((preemptionOf(fits, 2, s5, new Map([['n4', n4], ['n5', n5]])) as { candidate: any }).candidate.node, 'n5', 'the victim started last');
  // waiting for the victims of an earlier preemption on the nominated node
  const nominated = newPodInfo({ ...pod('p', { priority: 10 }, [req('1500m')]), status: { nominatedNodeName: 'n1' } });
  const n1Preempted = newNodeInfo(n1.node, n1.pods.map((x) => (x.key === 'default/a' ? { ...x, preempted: true } : x)));
  assert.deepEqual(preemptionOf(nominated, 1, s3, new Map([['n1', n1Preempted]])), { message: 'preemption: not eligible due to a terminating pod on the nominated node.', waitForVictims: true });
});

test('scores: LeastAllocated, BalancedAllocation, node affinity, PreferNoSchedule, image locality', () => {
  const p = newPodInfo(pod('p', {}, [req('1', '1Gi')]));
  const empty = newNodeInfo(node('a', { cpu: '4', memory: '8Gi' }));
  // cpu (4000 - 1000) * 100 / 4000 = 75, memory (8 - 1) * 100 / 8 = 87 → (75 + 87) / 2 = 81
  assert.equal(scoreNodeResourcesFit(p, empty), 81);
  assert.equal(scoreNodeResourcesFit(p, empty, { fitStrategy: 'MostAllocated', fitResources: DEFAULT_SCORING.fitResources }), 18);
  // cpu 1/4, memory 1/8: (1 - |0.25 - 0.125| / 2) * 100 = 93
  assert.equal(scoreBalancedAllocation(p, empty), 93);
  assert.ok(balancedAllocationSkips(newPodInfo(pod('be'))));
  assert.ok(!balancedAllocationSkips(p));
  // a best-effort pod counts 100m and 200Mi for LeastAllocated
  assert.equal(scoreNodeResourcesFit(newPodInfo(pod('be')), empty), Math.trunc((Math.trunc((3900 * 100) / 4000) + Math.trunc(((8192 - 200) * 100) / 8192)) / 2));

  const pref = pod('q', { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 3, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } }, { weight: 5, preference: { matchExpressions: [{ key: 'disk', operator: 'Exists' }] } }] } } });
  assert.equal(scoreNodeAffinity(pref, node('x', { labels: { zone: 'a', disk: 'ssd' } })), 8);
  assert.equal(scoreNodeAffinity(pref, node('y', { labels: { zone: 'a' } })), 3);
  assert.deepEqual(defaultNormalizeScore([8, 3, 0], false), [100, 37, 0]);
  assert.deepEqual(defaultNormalizeScore([0, 0], true), [100, 100]);
  assert.deepEqual(defaultNormalizeScore([2, 1, 0], true), [0, 50, 100]);
  assert.equal(scoreTaintToleration(pod('t'), node('z', { taints: [{ key: 'a', effect: 'PreferNoSchedule' }, { key: 'b', effect: 'PreferNoSchedule' }, { key: 'c', effect: 'NoSchedule' }] })), 2);
  assert.equal(scoreTaintToleration(pod('t', { tolerations: [{ key: 'a', operator: 'Exists', effect: 'PreferNoSchedule' }, { key: 'b', operator: 'Exists', effect: 'NoSchedule' }] }), node('z', { taints: [{ key: 'a', effect: 'PreferNoSchedule' }, { key: 'b', effect: 'PreferNoSchedule' }] })), 1);

  const withImage = node('img', { images: [{ names: ['nginx:1.25'], sizeBytes: 500 * 1024 * 1024 }] });
  const images = imageStates([withImage, node('plain')]);
  // 500 MiB spread over half the nodes = 250 MiB → (250 - 23) * 100 / (1000 - 23) = 23
  assert.equal(scoreImageLocality(pod('i', {}, [{ name: 'c', image: 'nginx:1.25' }]), withImage, images), 23);
  assert.equal(scoreImageLocality(pod('i', {}, [{ name: 'c', image: 'nginx' }]), withImage, images), 0);
});

test('scoring prefers the emptier node, tolerated taints and preferred labels; ties at random', () => {
  const p = newPodInfo(pod('p', {}, [req('1', '1Gi')]));
  const busy = newNodeInfo(node('busy'), [summarizePod(pod('x', {}, [req('3', '6Gi')]))]);
  const idle = newNodeInfo(node('idle'));
  const totals = scoreNodes(p, [busy, idle], DEFAULT_SCORING, imageStates([busy.node, idle.node]));
  assert.ok(totals[1]! > totals[0]!, `${totals}`);
  assert.equal(selectHost(['busy', 'idle'], totals), 'idle');
  const soft = newNodeInfo(node('soft', { taints: [{ key: 'k', effect: 'PreferNoSchedule' }] }));
  const t2 = scoreNodes(p, [soft, newNodeInfo(node('clean'))], DEFAULT_SCORING, imageStates([]));
  assert.equal(t2[1]! - t2[0]!, 300, 'TaintToleration weighs 3');
  // ties: each of the tied nodes can win
  const seen = new Set<string>();
  for (const r of [0, 0.3, 0.6, 0.99]) seen.add(selectHost(['a', 'b', 'c'], [5, 7, 7], () => r));
  assert.deepEqual([...seen].sort(), ['b', 'c']);
});

test('numFeasibleNodesToFind: every node below 100, then the adaptive percentage (at least 100)', () => {
  assert.equal(numFeasibleNodesToFind(50, undefined), 50);
  assert.equal(numFeasibleNodesToFind(99, 10), 99);
  assert.equal(numFeasibleNodesToFind(1000, undefined), 420); // 50 - 1000/125 = 42 %
  assert.equal(numFeasibleNodesToFind(5000, 0), 500); // 50 - 40 = 10 %
  assert.equal(numFeasibleNodesToFind(10000, undefined), 500); // at least 5 %
  assert.equal(numFeasibleNodesToFind(500, 10), 100);
  assert.equal(numFeasibleNodesToFind(500, 100), 500);
});

test('the queue: priority then age; backoff; unschedulable pods move on node events; gated pods wait', () => {
  let now = 1_000_000;
  const q = new SchedulingQueue({ initialBackoffMs: 1000, maxBackoffMs: 10_000, maxInUnschedulableMs: 300_000, recheckMs: 30_000, now: () => now });
  try {
    const mk = (name: string, priority: number, created: string, extra: Record<string, any> = {}) => ({ metadata: { name, namespace: 'd', uid: name, creationTimestamp: created }, spec: { priority, ...extra } });
    q.add(mk('old-low', 0, '2024-01-01T00:00:00Z'));
    q.add(mk('new-high', 10, '2024-01-02T00:00:00Z'));
    q.add(mk('new-low', 0, '2024-01-02T00:00:00Z'));
    q.add(mk('gated', 100, '2024-01-01T00:00:00Z', { schedulingGates: [{ name: 'g' }] }));
    assert.deepEqual(q.counts(), { active: 3, backoff: 0, unschedulable: 0, gated: 1 });
    const first = q.pop()!;
    assert.equal(first.key, 'd/new-high');
    assert.equal(q.pop()!.key, 'd/old-low');
    q.requeueUnschedulable(first, false);
    assert.equal(q.counts().unschedulable, 1);
    // a node event: its backoff (1 s after one attempt) has not passed → backoff, then active
    q.moveAllToActiveOrBackoff();
    assert.equal(q.counts().backoff, 1);
    now += 1000;
    q.flushBackoff();
    assert.equal(q.counts().backoff, 0);
    assert.equal(q.pop()!.key, 'd/new-high');
    assert.equal(q.backoffMs(1), 1000);
    assert.equal(q.backoffMs(3), 4000);
    assert.equal(q.backoffMs(10), 10_000);
    // the gates removed: active
    q.update(mk('gated', 100, '2024-01-01T00:00:00Z'));
    assert.equal(q.pop()!.key, 'd/gated');
    // a pod that lacked room is tried again after the recheck period
    const p = q.pop()!;
    assert.equal(p.key, 'd/new-low');
    q.requeueUnschedulable(p, true);
    now += 29_000;
    q.flushUnschedulable();
    assert.equal(q.counts().unschedulable, 1);
    now += 2_000;
    q.flushUnschedulable();
    assert.equal(q.counts().unschedulable, 0);
  } finally {
    q.close();
  }
});

test('node updates that matter: labels, taints, allocatable, unschedulable, conditions (not heartbeats)', () => {
  const n = { metadata: { labels: { a: '1' } }, spec: {}, status: { allocatable: { cpu: '1' }, conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: 't1' }] } };
  const beat = structuredClone(n);
  beat.status.conditions[0]!.lastHeartbeatTime = 't2';
  assert.equal(nodeSchedulingPropertiesChanged(n, beat), false);
  assert.equal(nodeSchedulingPropertiesChanged(n, { ...n, metadata: { labels: { a: '2' } } }), true);
  assert.equal(nodeSchedulingPropertiesChanged(n, { ...n, spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } }), true);
  assert.equal(nodeSchedulingPropertiesChanged(n, { ...n, status: { ...n.status, conditions: [{ type: 'Ready', status: 'False' }] } }), true);
});

test('KubeSchedulerConfiguration: profiles, weights and strategies it honours, what it refuses', () => {
  const base = { apiVersion: 'kubescheduler.config.k8s.io/v1', kind: 'KubeSchedulerConfiguration' };
  const c = parseSchedulerConfiguration({
    ...base,
    clientConnection: { kubeconfig: '/k' },
    leaderElection: { leaderElect: false, leaseDuration: '30s' },
    percentageOfNodesToScore: 50,
    podInitialBackoffSeconds: 2,
    podMaxBackoffSeconds: 20,
    profiles: [
      { schedulerName: 'default-scheduler' },
      {
        schedulerName: 'packer',
        plugins: { score: { disabled: [{ name: 'NodeResourcesBalancedAllocation' }], enabled: [{ name: 'NodeResourcesFit', weight: 5 }] }, filter: { disabled: [{ name: 'NodePorts' }] } },
        pluginConfig: [{ name: 'NodeResourcesFit', args: { scoringStrategy: { type: 'MostAllocated', resources: [{ name: 'cpu', weight: 2 }] } } }],
      },
    ],
  });
  assert.equal(c.clientConnection.kubeconfig, '/k');
  assert.equal(c.leaderElection.leaderElect, false);
  assert.equal(c.leaderElection.leaseDurationMs, 30_000);
  assert.equal(c.percentageOfNodesToScore, 50);
  assert.deepEqual(c.profiles.map((p) => p.schedulerName), ['default-scheduler', 'packer']);
  const packer = c.profiles[1]!;
  assert.equal(packer.scoring.weights.NodeResourcesBalancedAllocation, 0);
  assert.equal(packer.scoring.weights.NodeResourcesFit, 5);
  assert.equal(packer.scoring.fitStrategy, 'MostAllocated');
  assert.deepEqual(packer.scoring.fitResources, [{ name: 'cpu', weight: 2 }]);
  assert.ok(!packer.filters.has('NodePorts'));
  assert.ok(c.profiles[0]!.filters.has('NodePorts'));
  const refuses = (doc: any, re: RegExp) => assert.throws(() => parseSchedulerConfiguration({ ...base, ...doc }), (e: Error) => e instanceof ConfigError && re.test(e.message));
  refuses({ profiles: [{ schedulerName: 'x', plugins: { filter: { enabled: [{ name: 'VolumeRestrictions' }] } } }] }, /VolumeRestrictions" is not implemented/);
  refuses({ profiles: [{ schedulerName: 'x', plugins: { score: { enabled: [{ name: 'VolumeBinding' }] } } }] }, /VolumeBinding" is not implemented/);
  assert.equal(parseSchedulerConfiguration({ ...base, profiles: [{ schedulerName: 'x', pluginConfig: [{ name: 'VolumeBinding', args: { bindTimeoutSeconds: 30 } }] }] }).profiles[0]!.bindTimeoutSeconds, 30);
  refuses({ profiles: [{ schedulerName: 'x', pluginConfig: [{ name: 'PodTopologySpread', args: { defaultingType: 'List', defaultConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }] } }] }] }, /only defaultingType System/);
  refuses({ profiles: [{ schedulerName: 'x', pluginConfig: [{ name: 'InterPodAffinity', args: { hardPodAffinityWeight: 5 } }] }] }, /hardPodAffinityWeight: only the default/);
  // (the two plugins that read every node's pods are in the default profile and can be turned off)
  const off = parseSchedulerConfiguration({ ...base, profiles: [{ schedulerName: 'x', plugins: { multiPoint: { disabled: [{ name: 'PodTopologySpread' }, { name: 'InterPodAffinity' }] } } }] });
  assert.ok(!off.profiles[0]!.filters.has('PodTopologySpread') && !off.profiles[0]!.filters.has('InterPodAffinity'));
  assert.equal(off.profiles[0]!.scoring.weights.PodTopologySpread, 0);
  assert.equal(c.profiles[0]!.scoring.weights.InterPodAffinity, 2);
  refuses({ profiles: [{ schedulerName: 'x', plugins: { multiPoint: { enabled: [{ name: 'MyPlugin' }] } } }] }, /plugin "MyPlugin" is not available/);
  refuses({ profiles: [{ schedulerName: 'x', pluginConfig: [{ name: 'NodeResourcesFit', args: { scoringStrategy: { type: 'RequestedToCapacityRatio' } } }] }] }, /Unsupported value: "RequestedToCapacityRatio"/);
  refuses({ profiles: [{ schedulerName: 'x', plugins: { bind: { disabled: [{ name: 'DefaultBinder' }] } } }] }, /cannot be disabled/);
  refuses({ profiles: [{ schedulerName: 'a' }, { schedulerName: 'a' }] }, /profiles\[1\].schedulerName: Duplicate value: "a"/);
  refuses({ extenders: [{ urlPrefix: 'http://x' }] }, /extenders/);
  refuses({ podInitialBackoffSeconds: 5, podMaxBackoffSeconds: 2 }, /podMaxBackoffSeconds/);
  refuses({ bogus: 1 }, /unknown field "bogus"/);
});
