// The DaemonSet controller's pure pieces (the controller itself is tested end to end in
// test/e2e/daemonset-controller.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addDaemonPodTolerations,
  byCreationAndPhase,
  daemonPodTemplate,
  isPodUpdated,
  maxUnavailableOf,
  nodeShouldRunDaemonPod,
  replaceNodeNameAffinity,
  revisionMatches,
  revisionPatch,
  rollingUpdateDeletes,
  surgeRollingUpdate,
  surplusWithSurge,
  targetNodeName,
} from '../../src/controllers/daemonset.js';

const node = (name: string, labels: Record<string, string> = {}, taints: any[] = []) => ({ metadata: { name, labels }, spec: { taints } });
const ds = (spec: any = {}, annotations?: Record<string, string>) => ({
  metadata: { name: 'd', namespace: 'ns', ...(annotations ? { annotations } : {}) },
  spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } } },
});

test('the daemon tolerations: six always, network-unavailable for hostNetwork pods, one with the same key and effect replaced', () => {
  const spec: any = { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Equal', value: 'x', effect: 'NoSchedule' }, { key: 'mine', operator: 'Exists' }] };
  addDaemonPodTolerations(spec);
  assert.deepEqual(
    spec.tolerations.map((t: any) => `${t.key}:${t.operator}:${t.effect ?? ''}`),
    [
      'node.kubernetes.io/unschedulable:Exists:NoSchedule',
      'mine:Exists:',
      'node.kubernetes.io/not-ready:Exists:NoExecute',
      'node.kubernetes.io/unreachable:Exists:NoExecute',
      'node.kubernetes.io/disk-pressure:Exists:NoSchedule',
      'node.kubernetes.io/memory-pressure:Exists:NoSchedule',
      'node.kubernetes.io/pid-pressure:Exists:NoSchedule',
    ],
  );
  const host: any = { hostNetwork: true };
  addDaemonPodTolerations(host);
  assert.ok(host.tolerations.some((t: any) => t.key === 'node.kubernetes.io/network-unavailable' && t.effect === 'NoSchedule'));
});

test('nodeShouldRunDaemonPod: selector, affinity, nodeName, taints (NoSchedule keeps a pod running, NoExecute does not)', () => {
  assert.deepEqual(nodeShouldRunDaemonPod(ds(), node('a')), { shouldRun: true, shouldContinueRunning: true });
  assert.deepEqual(nodeShouldRunDaemonPod(ds({ nodeSelector: { tier: 'edge' } }), node('a')), { shouldRun: false, shouldContinueRunning: false });
  assert.deepEqual(nodeShouldRunDaemonPod(ds({ nodeSelector: { tier: 'edge' } }), node('a', { tier: 'edge' })), { shouldRun: true, shouldContinueRunning: true });
  assert.deepEqual(nodeShouldRunDaemonPod(ds({ nodeName: 'b' }), node('a')), { shouldRun: false, shouldContinueRunning: false });
  const affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] }] } } };
  assert.equal(nodeShouldRunDaemonPod(ds({ affinity }), node('a', { zone: 'z2' })).shouldRun, false);
  assert.equal(nodeShouldRunDaemonPod(ds({ affinity }), node('a', { zone: 'z1' })).shouldRun, true);
  const noSchedule = node('a', {}, [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }]);
  assert.deepEqual(nodeShouldRunDaemonPod(ds(), noSchedule), { shouldRun: false, shouldContinueRunning: true });
  assert.deepEqual(nodeShouldRunDaemonPod(ds({ tolerations: [{ key: 'dedicated', operator: 'Exists' }] }), noSchedule), { shouldRun: true, shouldContinueRunning: true });
  const noExecute = node('a', {}, [{ key: 'dedicated', value: 'x', effect: 'NoExecute' }]);
  assert.deepEqual(nodeShouldRunDaemonPod(ds(), noExecute), { shouldRun: false, shouldContinueRunning: false });
  // the taints the daemon tolerations cover
  assert.equal(nodeShouldRunDaemonPod(ds(), node('a', {}, [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }])).shouldRun, true);
  assert.equal(nodeShouldRunDaemonPod(ds(), node('a', {}, [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }])).shouldRun, false);
  assert.equal(nodeShouldRunDaemonPod(ds({ hostNetwork: true }), node('a', {}, [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }])).shouldRun, true);
});

test('the node affinity term replaces every required term and keeps the rest of the affinity', () => {
  const term = { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] };
  assert.deepEqual(replaceNodeNameAffinity(undefined, 'n1'), { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term] } } });
  const preferred = [{ weight: 1, preference: { matchExpressions: [{ key: 'k', operator: 'Exists' }] } }];
  const a = { podAffinity: { x: 1 }, nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred, requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'Exists' }] }, { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['old'] }] }] } } };
  assert.deepEqual(replaceNodeNameAffinity(a, 'n1'), { podAffinity: { x: 1 }, nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred, requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term] } } });
  assert.equal(targetNodeName({ spec: { affinity: replaceNodeNameAffinity(undefined, 'n1') } }), 'n1');
  assert.equal(targetNodeName({ spec: { nodeName: 'n2', affinity: replaceNodeNameAffinity(undefined, 'n1') } }), 'n2');
  assert.equal(targetNodeName({ spec: {} }), undefined);
});

test('the pod template: generation and hash labels, the template itself untouched', () => {
  const d = ds({}, { 'deprecated.daemonset.template.generation': '3' });
  const t = daemonPodTemplate(d, 'abc');
  assert.deepEqual(t.metadata.labels, { app: 'd', 'pod-template-generation': '3', 'controller-revision-hash': 'abc' });
  assert.equal(t.spec.tolerations.length, 6);
  assert.equal((d.spec.template.spec as any).tolerations, undefined);
  assert.deepEqual(daemonPodTemplate(ds(), '').metadata.labels, { app: 'd' });
  assert.equal(isPodUpdated({ metadata: { labels: { 'controller-revision-hash': 'abc' } } }, 'abc', undefined), true);
  assert.equal(isPodUpdated({ metadata: { labels: { 'pod-template-generation': '3' } } }, 'abc', '3'), true);
  assert.equal(isPodUpdated({ metadata: { labels: { 'controller-revision-hash': 'old', 'pod-template-generation': '2' } } }, 'abc', '3'), false);
});

test('the revision data: the template with $patch replace under spec, keys sorted, creationTimestamp null', () => {
  const d = ds();
  assert.equal(
    JSON.stringify(revisionPatch(d)),
    '{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"d"}},"spec":{"containers":[{"image":"i","name":"c"}]}}}}',
  );
  assert.equal(revisionMatches(d, { data: JSON.parse(JSON.stringify(revisionPatch(d))) }), true);
  assert.equal(revisionMatches(ds({ hostNetwork: true }), { data: revisionPatch(d) }), false);
});

test('maxUnavailable: an int, a percentage rounded up, 1 when it and maxSurge come to 0', () => {
  const withRU = (ru: any) => ({ spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: ru } } });
  assert.equal(maxUnavailableOf({ spec: {} }, 10), 1);
  assert.equal(maxUnavailableOf(withRU({ maxUnavailable: 3 }), 10), 3);
  assert.equal(maxUnavailableOf(withRU({ maxUnavailable: '25%' }), 10), 3);
  assert.equal(maxUnavailableOf(withRU({ maxUnavailable: 0 }), 10), 1);
});

test('rolling update: old available pods deleted only within maxUnavailable; old unavailable pods always', () => {
  const t = '2020-01-01T00:00:00Z';
  const pod = (name: string, hash: string, ready: boolean) => ({ metadata: { name, labels: { 'controller-revision-hash': hash }, creationTimestamp: t }, status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: t }] } });
  const now = Date.parse('2021-01-01T00:00:00Z');
  const names = (pods: any[]) => pods.map((p) => p.metadata.name).sort();
  let m = new Map<string, any[]>([['a', [pod('a1', 'old', true)]], ['b', [pod('b1', 'old', true)]], ['c', [pod('c1', 'old', true)]]]);
  assert.equal(rollingUpdateDeletes(m, 'new', undefined, 1, 0, now).length, 1);
  assert.equal(rollingUpdateDeletes(m, 'new', undefined, 2, 0, now).length, 2);
  // a new pod not ready yet uses up the budget; an old pod not ready is replaced anyway
  m = new Map([['a', [pod('a2', 'new', false)]], ['b', [pod('b1', 'old', true)]], ['c', [pod('c1', 'old', false)]]]);
  assert.deepEqual(names(rollingUpdateDeletes(m, 'new', undefined, 1, 0, now)), ['c1']);
  // a node with two pods counts as unavailable
  m = new Map([['a', [pod('a1', 'old', true), pod('a2', 'new', true)]], ['b', [pod('b1', 'old', true)]]]);
  assert.deepEqual(rollingUpdateDeletes(m, 'new', undefined, 1, 0, now), []);
  // minReadySeconds: the new pod ready for 10 s is not available yet under 60
  const fresh = pod('a2', 'new', true);
  fresh.status.conditions[0]!.lastTransitionTime = new Date(now - 10_000).toISOString();
  m = new Map([['a', [fresh]], ['b', [pod('b1', 'old', true)]]]);
  assert.deepEqual(names(rollingUpdateDeletes(m, 'new', undefined, 1, 0, now)), ['b1']);
  assert.deepEqual(rollingUpdateDeletes(m, 'new', undefined, 1, 60, now), []);
});

test('extra pods on a node: the running pod is kept, then the oldest', () => {
  const p = (name: string, phase: string, at: string) => ({ metadata: { name, creationTimestamp: at }, status: { phase } });
  const pods = [p('x', 'Pending', '2020-01-01T00:00:00Z'), p('y', 'Running', '2020-01-02T00:00:00Z'), p('z', 'Running', '2020-01-01T00:00:00Z')];
  assert.deepEqual(pods.sort(byCreationAndPhase).map((q) => q.metadata.name), ['z', 'y', 'x']);
});

test('surge: new pods beside available old ones up to maxSurge, at once for unavailable old ones; old pods go once the new one is available', () => {
  const t = '2020-01-01T00:00:00Z';
  const pod = (name: string, hash: string, ready: boolean, at = t) => ({ metadata: { name, labels: { 'controller-revision-hash': hash }, creationTimestamp: at }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: t }] } });
  const now = Date.parse('2021-01-01T00:00:00Z');
  const o = { maxSurge: 1, desired: 3, minReadySeconds: 0, now, shouldRun: () => true };
  let m = new Map<string, any[]>([['a', [pod('a1', 'old', true)]], ['b', [pod('b1', 'old', true)]], ['c', [pod('c1', 'old', false)]]]);
  let r = surgeRollingUpdate(m, 'new', undefined, o);
  assert.deepEqual(r.creates, ['c', 'a']);
  assert.deepEqual(r.deletes, []);
  // a surged node waiting for its new pod uses up the surge; an available new pod retires the old one
  m = new Map([['a', [pod('a1', 'old', true), pod('a2', 'new', false)]], ['b', [pod('b1', 'old', true)]], ['c', [pod('c1', 'old', true), pod('c2', 'new', true)]]]);
  r = surgeRollingUpdate(m, 'new', undefined, o);
  assert.deepEqual(r.creates, []);
  assert.deepEqual(r.deletes.map((p) => p.metadata.name), ['c1']);
  // the manage loop's view of a node with both
  assert.deepEqual(surplusWithSurge([pod('a1', 'old', true), pod('a2', 'new', false, '2020-02-01T00:00:00Z')], 'new', 0, now), []);
  assert.deepEqual(surplusWithSurge([pod('a1', 'old', true), pod('a2', 'new', true, '2020-02-01T00:00:00Z')], 'new', 0, now).map((p) => p.metadata.name), ['a1']);
  assert.deepEqual(surplusWithSurge([pod('a1', 'old', false), pod('a2', 'new', false, '2020-02-01T00:00:00Z')], 'new', 0, now).map((p) => p.metadata.name), ['a1']);
});
