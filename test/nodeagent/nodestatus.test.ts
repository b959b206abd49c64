// The node status's runtime parts, as the kubelet's RuntimeHandlers and NodeFeatures setters write
// them from the runtime's last Status: each handler with both of its features said, the
// supplementalGroupsPolicy feature only when the runtime reports features, neither when their gates
// are off; kept as they were while the runtime is down. (containerd 1.6, the end-to-end tests'
// runtime, lists no handlers and no features, so only this test sees them.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { NodeAgentNode, type NodeOptions } from '../../src/nodeagent/node.js';
import type { RuntimeFeatures, RuntimeHandler } from '../../src/nodeagent/cri/types.js';
import { nopLogger } from '../../src/client/log.js';

function node(runtime: () => Promise<{ problem?: string; handlers?: RuntimeHandler[]; features?: RuntimeFeatures }>, gates: Partial<NodeOptions> = {}): NodeAgentNode {
  return new NodeAgentNode({
    client: undefined,
    nodeName: 'n1',
    hostname: 'n1',
    nodeIPs: ['10.0.0.1'],
    labels: {},
    taints: [],
    providerID: '',
    podCIDR: '',
    maxPods: 110,
    kubeletPort: 10250,
    rootDir: tmpdir(),
    systemReserved: {},
    kubeReserved: {},
    evictionHard: {},
    nodeStatusMaxImages: 50,
    registerNode: true,
    statusUpdateFrequencyMs: 10_000,
    statusReportFrequencyMs: 300_000,
    leaseDurationSeconds: 40,
    kubeletVersion: 'v1.33.0',
    runtime: { runtimeVersion: () => 'containerd://2.1.0', runtimeStatus: runtime, images: async () => [] },
    syncLoopError: () => undefined,
    log: nopLogger,
    reportRuntimeHandlers: true,
    reportFeatures: true,
    ...gates,
  });
}

test('runtime handlers and features are reported as the runtime lists them, each handler with both features', async () => {
  let down = false;
  const n = node(async () => {
    if (down) throw new Error('connection refused');
    return {
      handlers: [{ name: '', features: { recursiveReadOnlyMounts: true, userNamespaces: true } }, { name: 'runc', features: { recursiveReadOnlyMounts: true } }, { name: 'kata' }],
      features: { supplementalGroupsPolicy: true },
    };
  });
  const want = [
    { name: '', features: { recursiveReadOnlyMounts: true, userNamespaces: true } },
    { name: 'runc', features: { recursiveReadOnlyMounts: true, userNamespaces: false } },
    { name: 'kata', features: { recursiveReadOnlyMounts: false, userNamespaces: false } },
  ];
  const s = await n.status();
  assert.deepEqual(s.runtimeHandlers, want);
  assert.deepEqual(s.features, { supplementalGroupsPolicy: true });
  // the runtime down: NotReady, and what it said last is kept
  down = true;
  const d = await n.status();
  assert.equal(d.conditions.find((c: any) => c.type === 'Ready').status, 'False');
  assert.deepEqual(d.runtimeHandlers, want);
  assert.deepEqual(d.features, { supplementalGroupsPolicy: true });
});

test('a runtime that lists no handlers and no features (containerd 1.6) gets neither field; features without the policy say false', async () => {
  const none = await node(async () => ({ handlers: [] })).status();
  assert.equal('runtimeHandlers' in none, false);
  assert.equal('features' in none, false);
  const empty = await node(async () => ({ features: {} })).status();
  assert.deepEqual(empty.features, { supplementalGroupsPolicy: false });
});

test('with the gates off (RecursiveReadOnlyMounts and UserNamespacesSupport; SupplementalGroupsPolicy) neither is reported', async () => {
  const s = await node(async () => ({ handlers: [{ name: 'runc' }], features: { supplementalGroupsPolicy: true } }), { reportRuntimeHandlers: false, reportFeatures: false }).status();
  assert.equal('runtimeHandlers' in s, false);
  assert.equal('features' in s, false);
});
