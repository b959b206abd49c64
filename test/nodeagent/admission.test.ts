// The kubelet's predicate admission (src/nodeagent/admission.ts) over hand-made nodes and pods;
// refused pods on a real node are in test/e2e/kubelet-runtimeclass.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admitPod, isExtendedResourceName, PredicateAdmitHandler } from '../../src/nodeagent/admission.js';
import { nopLogger } from '../../src/client/log.js';

const NODE = 'n1';
const node = (o: { allocatable?: Record<string, string>; labels?: Record<string, string>; taints?: any[]; features?: any } = {}) => ({
  metadata: { name: NODE, labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': NODE, ...o.labels } },
  spec: o.taints ? { taints: o.taints } : {},
  status: { allocatable: { cpu: '4', memory: '8Gi', 'ephemeral-storage': '100Gi', pods: '110', ...o.allocatable }, ...(o.features ? { features: o.features } : {}) },
});
let n = 0;
const pod = (requests: Record<string, string> = {}, spec: Record<string, any> = {}, meta: Record<string, any> = {}) => ({
  metadata: { name: `p${++n}`, namespace: 'default', uid: `uid-${n}`, ...meta },
  spec: { nodeName: NODE, containers: [{ name: 'c', image: 'i', resources: { requests } }], ...spec },
});

test('a pod that fits is admitted; requests beyond what is left give OutOf<resource> with the kubelet\'s numbers (cpu in millicores)', () => {
  assert.equal(admitPod(pod({ cpu: '1', memory: '1Gi' }), node(), []), undefined);
  assert.deepEqual(admitPod(pod({ cpu: '5' }), node(), []), { reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 5000, used: 0, capacity: 4000" });
  const others = [pod({ cpu: '1500m', memory: '6Gi' }), pod({ cpu: '2' })];
  assert.deepEqual(admitPod(pod({ cpu: '1' }), node(), others), { reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 1000, used: 3500, capacity: 4000" });
  assert.deepEqual(admitPod(pod({ memory: '3Gi' }), node(), others), { reason: 'OutOfmemory', message: `Node didn't have enough resource: memory, requested: ${3 * 2 ** 30}, used: ${6 * 2 ** 30}, capacity: ${8 * 2 ** 30}` });
  assert.deepEqual(admitPod(pod({ 'ephemeral-storage': '200Gi' }), node(), []), { reason: 'OutOfephemeral-storage', message: `Node didn't have enough resource: ephemeral-storage, requested: ${200 * 2 ** 30}, used: 0, capacity: ${100 * 2 ** 30}` });
  // the pod count first, whatever else does not fit
  assert.deepEqual(admitPod(pod({ cpu: '5' }), node({ allocatable: { pods: '2' } }), others), { reason: 'OutOfpods', message: "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2" });
  // init containers count at their largest, with the overhead added
  const init = pod({}, { initContainers: [{ name: 'i', image: 'i', resources: { requests: { cpu: '3' } } }], overhead: { cpu: '1500m' } });
  assert.deepEqual(admitPod(init, node(), []), { reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 4500, used: 0, capacity: 4000" });
});

test('extended resources: those the node has none of are left out; those it has are counted (OutOf<name>)', () => {
  assert.ok(isExtendedResourceName('example.com/gpu'));
  assert.ok(!isExtendedResourceName('cpu') && !isExtendedResourceName('hugepages-2Mi') && !isExtendedResourceName('kubernetes.io/foo') && !isExtendedResourceName('requests.example.com/x'));
  assert.equal(admitPod(pod({ 'example.com/gpu': '3' }), node(), []), undefined, 'a resource unknown to the node (a cluster-level one) is not the kubelet\'s to check');
  const gpuNode = node({ allocatable: { 'example.com/gpu': '2' } });
  assert.equal(admitPod(pod({ 'example.com/gpu': '2' }), gpuNode, []), undefined);
  assert.deepEqual(admitPod(pod({ 'example.com/gpu': '1' }), gpuNode, [pod({ 'example.com/gpu': '2' })]), { reason: 'OutOfexample.com/gpu', message: "Node didn't have enough resource: example.com/gpu, requested: 1, used: 2, capacity: 2" });
  // a node that lists the resource with nothing of it still has it
  assert.deepEqual(admitPod(pod({ 'example.com/gpu': '1' }), node({ allocatable: { 'example.com/gpu': '0' } }), [])?.reason, 'OutOfexample.com/gpu');
  // hugepages are no extended resource: the node's 0 counts
  assert.deepEqual(admitPod(pod({ 'hugepages-2Mi': '2Mi' }), node({ allocatable: { 'hugepages-2Mi': '0' } }), []), { reason: 'OutOfhugepages-2Mi', message: `Node didn't have enough resource: hugepages-2Mi, requested: ${2 * 2 ** 20}, used: 0, capacity: 0` });
});

test('node affinity, node name, host ports and NoExecute taints: `Predicate <plugin> failed: <reason>`, resources first', () => {
  assert.deepEqual(admitPod(pod({}, { nodeSelector: { disk: 'ssd' } }), node(), []), { reason: 'NodeAffinity', message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector" });
  assert.equal(admitPod(pod({}, { nodeSelector: { disk: 'ssd' } }), node({ labels: { disk: 'ssd' } }), []), undefined);
  const affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] } } };
  assert.equal(admitPod(pod({}, { affinity }), node(), [])?.reason, 'NodeAffinity');
  assert.deepEqual(admitPod(pod({}, { nodeName: 'other' }), node(), []), { reason: 'NodeName', message: "Predicate NodeName failed: node(s) didn't match the requested node name" });
  const web = (name: string) => pod({}, { containers: [{ name, image: 'i', ports: [{ containerPort: 80, hostPort: 8080 }] }] });
  assert.deepEqual(admitPod(web('b'), node(), [web('a')]), { reason: 'NodePorts', message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports" });
  assert.equal(admitPod(web('b'), node(), [pod()]), undefined);
  const tainted = node({ taints: [{ key: 'k', value: 'v', effect: 'NoExecute' }, { key: 'soft', effect: 'NoSchedule' }] });
  assert.deepEqual(admitPod(pod(), tainted, []), { reason: 'TaintToleration', message: "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate" });
  assert.equal(admitPod(pod({}, { tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute' }] }), tainted, []), undefined, 'NoSchedule taints are the scheduler\'s');
  assert.equal(admitPod(pod({}, {}, { annotations: { 'kubernetes.io/config.source': 'file' } }), tainted, []), undefined, 'static pods are not held to taints');
  // only the first reason: resources before node affinity
  assert.equal(admitPod(pod({ cpu: '9' }, { nodeSelector: { disk: 'ssd' } }), node(), [])?.reason, 'OutOfcpu');
});

test('critical pods: refused for their other reasons alone; for resources alone, as any pod (no preemption here)', () => {
  const critical = pod({ cpu: '9' }, { priority: 2_000_001_000, nodeSelector: { disk: 'ssd' } });
  assert.equal(admitPod(critical, node(), [])?.reason, 'NodeAffinity');
  assert.equal(admitPod(pod({ cpu: '9' }, { priority: 2_000_001_000 }), node(), [])?.reason, 'OutOfcpu');
});

test('the OS label and field, and SupplementalGroupsPolicy Strict on a node that does not report the feature', () => {
  assert.deepEqual(admitPod(pod({}, {}, { labels: { 'kubernetes.io/os': 'windows' } }), node(), []), { reason: 'PodOSSelectorNodeLabelDoesNotMatch', message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label" });
  assert.equal(admitPod(pod({}, {}, { labels: { 'kubernetes.io/os': 'linux' } }), node({ labels: { 'kubernetes.io/os': 'plan9' } }), []), undefined, 'the node counts as linux');
  assert.deepEqual(admitPod(pod({}, { os: { name: 'windows' } }), node(), []), { reason: 'PodOSNotSupported', message: "Failed to admit pod as the OS field doesn't match node OS" });
  assert.equal(admitPod(pod({}, { os: { name: 'linux' } }), node(), []), undefined);
  const strict = pod({ cpu: '9' }, { securityContext: { supplementalGroupsPolicy: 'Strict' } });
  const refusal = { reason: 'SupplementalGroupsPolicyNotSupported', message: 'SupplementalGroupsPolicy=Strict is not supported in this node' };
  assert.deepEqual(admitPod(strict, node(), []), refusal, 'before the resources');
  assert.deepEqual(admitPod(strict, node({ features: { supplementalGroupsPolicy: false } }), []), refusal);
  assert.equal(admitPod(strict, node({ features: { supplementalGroupsPolicy: true } }), [])?.reason, 'OutOfcpu');
  assert.equal(admitPod(pod({}, { securityContext: { supplementalGroupsPolicy: 'Merge' } }), node(), []), undefined);
});

test('the handler: the API server\'s Node (else the node the kubelet would register); pods it admitted count before the pod workers record them', async () => {
  const log = nopLogger;
  let gets = 0;
  const client = { json: async () => (gets++, node({ allocatable: { cpu: '2' } })) } as any;
  const admitted: any[] = [];
  const h = new PredicateAdmitHandler({ nodeName: NODE, client, initialNode: () => node(), admittedPods: () => admitted, log });
  // two pods admitted at once: the second sees the first
  const [a, b] = await Promise.all([h.admit(pod({ cpu: '1500m' })), h.admit(pod({ cpu: '1' }))]);
  assert.equal(a, undefined);
  assert.equal(b?.reason, 'OutOfcpu');
  assert.equal(gets, 1, 'one GET for both');
  // once the pod workers no longer hold the first (it ended), the second fits
  await new Promise((r) => setImmediate(r));
  assert.equal(await h.admit(pod({ cpu: '1' })), undefined);
  // a node selector refused on the kept Node is asked again of a fresh one (a label just added)
  let labels: Record<string, string> = {};
  const relabelled = new PredicateAdmitHandler({ nodeName: NODE, client: { json: async () => node({ labels }) } as any, initialNode: () => node(), admittedPods: () => [], log });
  assert.equal(await relabelled.admit(pod()), undefined);
  labels = { disk: 'ssd' };
  assert.equal(await relabelled.admit(pod({}, { nodeSelector: { disk: 'ssd' } })), undefined);
  assert.equal((await relabelled.admit(pod({}, { nodeSelector: { disk: 'hdd' } })))?.reason, 'NodeAffinity');
  // no API server: the node the kubelet would register
  const standalone = new PredicateAdmitHandler({ nodeName: NODE, client: undefined, initialNode: () => node({ allocatable: { cpu: '500m' } }), admittedPods: () => [], log });
  assert.equal((await standalone.admit(pod({ cpu: '1' })))?.message, "Node didn't have enough resource: cpu, requested: 1000, used: 0, capacity: 500");
  // the Node cannot be read: the same
  const failing = new PredicateAdmitHandler({ nodeName: NODE, client: { json: async () => { throw new Error('down'); } } as any, initialNode: () => node({ allocatable: { cpu: '500m' } }), admittedPods: () => [], log });
  assert.equal((await failing.admit(pod({ cpu: '1' })))?.reason, 'OutOfcpu');
});
