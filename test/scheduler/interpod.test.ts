// InterPodAffinity and PodTopologySpread (src/scheduler/interpod.ts) with hand-made nodes and pods:
// the filters with their reasons, the symmetry of existing pods' anti-affinity, namespaces and
// namespace selectors, matchLabelKeys, minDomains and the node inclusion policies, and the scores.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ClusterPods,
  defaultSelector,
  defaultSpreadConstraints,
  ERR_AFFINITY_RULES,
  ERR_ANTI_AFFINITY_RULES,
  ERR_EXISTING_ANTI_AFFINITY,
  ERR_SPREAD,
  ERR_SPREAD_LABEL,
  filterInterPodAffinity,
  filterPodTopologySpread,
  interPodPreFilter,
  interPodPreScore,
  placedPod,
  scoreInterPodAffinity,
  scorePodTopologySpread,
  spreadConstraints,
  spreadPreFilter,
} from '../../src/scheduler/interpod.js';

const node = (name: string, zone?: string, extra: any = {}) => ({ metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(zone ? { 'topology.kubernetes.io/zone': zone } : {}) } }, spec: extra });
const pod = (name: string, o: { ns?: string; labels?: Record<string, string>; node?: string; affinity?: any; spread?: any[]; deleting?: boolean } = {}) => ({
  metadata: { name, uid: `uid-${name}`, namespace: o.ns ?? 'default', labels: o.labels ?? {}, ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { nodeName: o.node, ...(o.affinity ? { affinity: o.affinity } : {}), ...(o.spread ? { topologySpreadConstraints: o.spread } : {}), containers: [{ name: 'c', image: 'x' }] },
});
const term = (labels: Record<string, string>, topologyKey = 'kubernetes.io/hostname', more: any = {}) => ({ labelSelector: { matchLabels: labels }, topologyKey, ...more });
const cluster = (pods: any[], namespaces: any[] = []) => new ClusterPods(pods.map((p) => placedPod(p)), namespaces);

const NODES = [node('a', 'z1'), node('b', 'z1'), node('c', 'z2')];

test('anti-affinity: the pod\'s own terms by hostname and by zone; the existing pods\' terms (symmetry)', () => {
  const cl = cluster([pod('db-0', { labels: { app: 'db' }, node: 'a' })]);
  const byHost = pod('db-1', { labels: { app: 'db' }, affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'db' })] } } });
  let st = interPodPreFilter(byHost, NODES, cl);
  assert.equal(filterInterPodAffinity(byHost, NODES[0], st, cl)?.reasons[0], ERR_ANTI_AFFINITY_RULES);
  assert.equal(filterInterPodAffinity(byHost, NODES[0], st, cl)?.code, 'Unschedulable');
  assert.equal(filterInterPodAffinity(byHost, NODES[1], st, cl), undefined);
  const byZone = pod('db-2', { labels: { app: 'db' }, affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'db' }, 'topology.kubernetes.io/zone')] } } });
  st = interPodPreFilter(byZone, NODES, cl);
  assert.deepEqual(NODES.map((n) => filterInterPodAffinity(byZone, n, st, cl)?.reasons[0]), [ERR_ANTI_AFFINITY_RULES, ERR_ANTI_AFFINITY_RULES, undefined]);
  // an existing pod whose term matches a pod with no affinity of its own keeps it out of its domain
  const cl2 = cluster([pod('guard', { labels: { app: 'guard' }, node: 'b', affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ role: 'noisy' }, 'topology.kubernetes.io/zone')] } } })]);
  const noisy = pod('noisy', { labels: { role: 'noisy' } });
  st = interPodPreFilter(noisy, NODES, cl2);
  assert.deepEqual(NODES.map((n) => filterInterPodAffinity(noisy, n, st, cl2)?.reasons[0]), [ERR_EXISTING_ANTI_AFFINITY, ERR_EXISTING_ANTI_AFFINITY, undefined]);
  // another namespace is out of the term's reach (its namespaces default to the pod's own)
  const other = pod('noisy', { ns: 'other', labels: { role: 'noisy' } });
  st = interPodPreFilter(other, NODES, cl2);
  assert.equal(filterInterPodAffinity(other, NODES[0], st, cl2), undefined);
});

test('affinity: all terms, the node needs the keys, the first pod of a group, namespaces and namespaceSelector', () => {
  const cl = cluster([pod('cache', { labels: { app: 'cache' }, node: 'c', ns: 'infra' })], [{ metadata: { name: 'infra', labels: { team: 'infra' } } }, { metadata: { name: 'default' } }]);
  const withNs = pod('web', { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'cache' }, 'topology.kubernetes.io/zone', { namespaces: ['infra'] })] } } });
  let st = interPodPreFilter(withNs, NODES, cl);
  assert.deepEqual(NODES.map((n) => filterInterPodAffinity(withNs, n, st, cl)?.reasons[0]), [ERR_AFFINITY_RULES, ERR_AFFINITY_RULES, undefined]);
  assert.equal(filterInterPodAffinity(withNs, NODES[0], st, cl)?.code, 'UnschedulableAndUnresolvable');
  const bySelector = pod('web', { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'cache' }, 'kubernetes.io/hostname', { namespaceSelector: { matchLabels: { team: 'infra' } } })] } } });
  st = interPodPreFilter(bySelector, NODES, cl);
  assert.deepEqual(NODES.map((n) => filterInterPodAffinity(bySelector, n, st, cl)?.reasons[0]), [ERR_AFFINITY_RULES, ERR_AFFINITY_RULES, undefined]);
  // (same namespace only: the cache is elsewhere, no pod matches anywhere, and the pod does not match itself)
  const sameNs = pod('web', { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'cache' })] } } });
  st = interPodPreFilter(sameNs, NODES, cl);
  assert.ok(NODES.every((n) => filterInterPodAffinity(sameNs, n, st, cl)?.reasons[0] === ERR_AFFINITY_RULES));
  // the first of a group whose terms select itself goes anywhere with the keys
  const first = pod('g-0', { labels: { group: 'g' }, affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ group: 'g' })] } } });
  st = interPodPreFilter(first, NODES, cl);
  assert.ok(NODES.every((n) => filterInterPodAffinity(first, n, st, cl) === undefined));
  assert.equal(filterInterPodAffinity(first, { metadata: { name: 'bare', labels: {} } }, st, cl)?.reasons[0], ERR_AFFINITY_RULES);
  // a missing labelSelector selects nothing
  const none = pod('n', { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname' }] } } });
  st = interPodPreFilter(none, NODES, cl);
  assert.ok(NODES.every((n) => filterInterPodAffinity(none, n, st, cl)?.reasons[0] === ERR_AFFINITY_RULES));
});

test('InterPodAffinity scores: preferred terms of the pod and of the existing pods, hard affinity weight 1, normalized min..max', () => {
  const cl = cluster([
    pod('cache', { labels: { app: 'cache' }, node: 'a' }),
    pod('batch', { labels: { app: 'batch' }, node: 'b' }),
    pod('friend', { labels: {}, node: 'c', affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'web' })] } } }),
  ]);
  const web = pod('web', { labels: { app: 'web' }, affinity: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, podAffinityTerm: term({ app: 'cache' }) }] }, podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 5, podAffinityTerm: term({ app: 'batch' }) }] } } });
  const pre = interPodPreScore(web, NODES, cl)!;
  // raw: a +10, b -5, c +1 (friend's required term matches web) -> (s - min) * 100 / 15
  assert.deepEqual(scoreInterPodAffinity(NODES, pre), [100, 0, 40]);
  assert.equal(interPodPreScore(pod('plain'), NODES, cluster([pod('x', { node: 'a' })])), undefined, 'nothing to score: skipped');
});

test('PodTopologySpread filter: skew with the pod itself, minDomains, the missing key, terminating pods and other namespaces ignored, nodeTaintsPolicy', () => {
  const sp = (o: any = {}) => [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'w' } }, ...o }];
  const cl = cluster([
    pod('w1', { labels: { app: 'w' }, node: 'a' }),
    pod('w2', { labels: { app: 'w' }, node: 'b', deleting: true }),
    pod('w3', { labels: { app: 'w' }, node: 'c', ns: 'other' }),
  ]);
  const p = pod('w4', { labels: { app: 'w' }, spread: sp() });
  let st = spreadPreFilter(p, NODES, cl);
  // z1 has 1 (w2 is being deleted), z2 has 0 (w3 is in another namespace): z1 1 + 1 - 0 = 2 > 1
  assert.deepEqual(NODES.map((n) => filterPodTopologySpread(p, n, st)?.reasons[0]), [ERR_SPREAD, ERR_SPREAD, undefined]);
  assert.equal(filterPodTopologySpread(p, { metadata: { name: 'bare', labels: {} } }, st)?.reasons[0], ERR_SPREAD_LABEL);
  assert.equal(filterPodTopologySpread(p, { metadata: { name: 'bare', labels: {} } }, st)?.code, 'UnschedulableAndUnresolvable');
  // a pod its own selector does not match adds nothing
  const outsider = pod('o', { labels: { app: 'other' }, spread: sp() });
  st = spreadPreFilter(outsider, NODES, cl);
  assert.ok(NODES.every((n) => filterPodTopologySpread(outsider, n, st) === undefined));
  // minDomains 3 with two zones: the global minimum counts as 0
  const cl2 = cluster([pod('w1', { labels: { app: 'w' }, node: 'a' }), pod('w5', { labels: { app: 'w' }, node: 'c' })]);
  const md = pod('w6', { labels: { app: 'w' }, spread: sp({ minDomains: 3 }) });
  st = spreadPreFilter(md, NODES, cl2);
  assert.ok(NODES.every((n) => filterPodTopologySpread(md, n, st)?.reasons[0] === ERR_SPREAD));
  // a tainted empty node is a domain of 0 unless nodeTaintsPolicy is Honor
  const nodes = [node('a'), node('b'), node('t', undefined, { taints: [{ key: 'k', effect: 'NoSchedule' }] })];
  const cl3 = cluster([pod('h1', { labels: { app: 'w' }, node: 'a' }), pod('h2', { labels: { app: 'w' }, node: 'b' })]);
  const host = (policy?: string) => pod('h3', { labels: { app: 'w' }, spread: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'w' } }, ...(policy ? { nodeTaintsPolicy: policy } : {}) }] });
  st = spreadPreFilter(host(), nodes, cl3);
  assert.equal(filterPodTopologySpread(host(), nodes[0], st)?.reasons[0], ERR_SPREAD);
  st = spreadPreFilter(host('Honor'), nodes, cl3);
  assert.equal(filterPodTopologySpread(host('Honor'), nodes[0], st), undefined);
  assert.deepEqual(spreadConstraints(host(), 'ScheduleAnyway'), []);
});

test('PodTopologySpread scores: fewer matching pods score higher; the system defaults over the Services and the controller', () => {
  const cl = cluster([pod('w1', { labels: { app: 'w' }, node: 'a' }), pod('w2', { labels: { app: 'w' }, node: 'a' }), pod('w3', { labels: { app: 'w' }, node: 'b' })]);
  const p = pod('w4', { labels: { app: 'w' }, spread: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'w' } } }] });
  const scores = scorePodTopologySpread(p, NODES, NODES, cl, spreadConstraints(p, 'ScheduleAnyway'), false)!;
  assert.ok(scores[2]! > scores[1]! && scores[1]! > scores[0]!, `c (0) > b (1) > a (2): ${scores}`);
  assert.equal(scores[2], 100);
  // the defaults: the Services selecting the pod and its ReplicaSet's selector
  const svc = { spec: { selector: { app: 'w' } } };
  const other = { spec: { selector: { app: 'else' } } };
  const rs = { kind: 'ReplicaSet', spec: { selector: { matchLabels: { app: 'w', 'pod-template-hash': 'h' } } } };
  const mine = pod('w5', { labels: { app: 'w', 'pod-template-hash': 'h' } });
  const sel = defaultSelector(mine, [svc, other], rs);
  assert.deepEqual(sel.map((r) => `${r.key}${r.op}${r.values.join(',')}`).sort(), ['app=w', 'app=w', 'pod-template-hash=h']);
  assert.deepEqual(defaultSpreadConstraints(sel).map((c) => [c.topologyKey, c.maxSkew]), [['kubernetes.io/hostname', 3], ['topology.kubernetes.io/zone', 5]]);
  assert.deepEqual(defaultSpreadConstraints(defaultSelector(pod('lone'), [other], undefined)), []);
  // (nodes without a zone still get hostname spreading under the defaults)
  const bare = [node('x'), node('y')];
  const cl2 = cluster([pod('m1', { labels: { app: 'w', 'pod-template-hash': 'h' }, node: 'x' })]);
  const d = scorePodTopologySpread(mine, bare, bare, cl2, defaultSpreadConstraints(sel), true)!;
  assert.ok(d[1]! > d[0]!, `the empty node first: ${d}`);
});
