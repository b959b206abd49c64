// The sandbox's runtime handler and user namespace (nodeagent/sandboxruntime.ts) with a fake
// runtime Status: the RuntimeClass lookup without an API server, the modes the gate gives, the
// kubelet's errors for a runtime without user namespaces, the blocks of host IDs given one per pod,
// kept on disk across a restart and freed with the pod, and the kubelet's share of IDs.
// (A real containerd and API server: test/e2e/kubelet-runtimeclass.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxRuntime, kubeletMappings, subordinateIDs, USERNS_MAPPINGS_FILE } from '../../src/nodeagent/sandboxruntime.js';
import { nopLogger } from '../../src/client/log.js';
import type { StatusResponse } from '../../src/nodeagent/cri/types.js';

const pod = (uid: string, spec: Record<string, unknown> = {}) => ({ metadata: { name: uid, namespace: 'default', uid }, spec });
const withUserns: StatusResponse = { runtimeHandlers: [{ name: '', features: { userNamespaces: true } }, { name: 'runc', features: { userNamespaces: true } }, { name: 'kata', features: {} }] };

function make(o: { gate?: boolean; status?: StatusResponse; dir?: string; idsPerPod?: number; maxPods?: number; mappings?: { first: number; length: number } } = {}) {
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'keelson-userns-'));
  const rt = new SandboxRuntime({
    client: undefined,
    status: async () => o.status ?? withUserns,
    userNamespaces: o.gate ?? true,
    idsPerPod: o.idsPerPod,
    maxPods: o.maxPods ?? 110,
    podsDir: dir,
    log: nopLogger,
    kubeletMappings: o.mappings ?? { first: 65536, length: 65536 * 110 },
  });
  return { rt, dir };
}

test('runtime handler: none without a class; a class without an API server is not found, in the lister\'s words', async () => {
  const { rt } = make();
  assert.equal(await rt.runtimeHandler(pod('a')), '');
  assert.equal(await rt.runtimeHandler(pod('a', { runtimeClassName: '' })), '');
  await assert.rejects(rt.runtimeHandler(pod('a', { runtimeClassName: 'gvisor' })), { message: 'runtimeclass.node.k8s.io "gvisor" not found' });
});

test('user namespace modes: NODE with the gate on unless hostUsers is false; nothing said with it off, and hostUsers refused', async () => {
  const on = make().rt;
  assert.deepEqual(await on.userNamespace(pod('a'), ''), { mode: 'NODE' });
  assert.deepEqual(await on.userNamespace(pod('a', { hostUsers: true }), ''), { mode: 'NODE' });
  const off = make({ gate: false }).rt;
  assert.equal(await off.userNamespace(pod('a'), ''), undefined);
  await assert.rejects(off.userNamespace(pod('a', { hostUsers: true }), ''), { message: 'the feature gate "UserNamespacesSupport" is disabled: can\'t set spec.HostUsers' });
  await assert.rejects(off.userNamespace(pod('a', { hostUsers: false }), ''), { message: 'the feature gate "UserNamespacesSupport" is disabled: can\'t set spec.HostUsers' });
});

test('hostUsers: false on a runtime that cannot: the kubelet\'s errors, and no block taken', async () => {
  const none = make({ status: {} });
  await assert.rejects(none.rt.userNamespace(pod('a', { hostUsers: false }), ''), { message: 'runtime handlers are not set' });
  // containerd 1.6 lists no handlers at all
  const empty = make({ status: { runtimeHandlers: [] } });
  await assert.rejects(empty.rt.userNamespace(pod('a', { hostUsers: false }), ''), { message: 'the handler "" is not known' });
  const rt = make().rt;
  await assert.rejects(rt.userNamespace(pod('a', { hostUsers: false }), 'kata'), { message: 'RuntimeClass handler "kata" does not support user namespaces' });
  await assert.rejects(rt.userNamespace(pod('a', { hostUsers: false }), 'wasm'), { message: 'the handler "wasm" is not known' });
  assert.equal(rt.allocations().size, 0);
});

test('hostUsers: false: one block of host IDs per pod, the same again for the same pod, kept across a restart, freed with the pod', async () => {
  const { rt, dir } = make();
  const a = await rt.userNamespace(pod('uid-a', { hostUsers: false }), '');
  assert.deepEqual(a, { mode: 'POD', uids: [{ hostId: 65536, containerId: 0, length: 65536 }], gids: [{ hostId: 65536, containerId: 0, length: 65536 }] });
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'uid-a', USERNS_MAPPINGS_FILE), 'utf8')), { uidMappings: [{ hostId: 65536, containerId: 0, length: 65536 }], gidMappings: [{ hostId: 65536, containerId: 0, length: 65536 }] });
  assert.deepEqual(await rt.userNamespace(pod('uid-a', { hostUsers: false }), 'runc'), a, 'the same block for the same pod');
  const b = await rt.userNamespace(pod('uid-b', { hostUsers: false }), '');
  assert.equal(b?.uids?.[0]?.hostId, 131072);
  // a restarted kubelet reads the blocks back: a new pod gets the next free one
  const again = make({ dir }).rt;
  assert.deepEqual(again.allocations(), new Map([['uid-a', 65536], ['uid-b', 131072]]));
  assert.equal((await again.userNamespace(pod('uid-c', { hostUsers: false }), ''))?.uids?.[0]?.hostId, 196608);
  // a pod gone: its block is free for the next
  again.release('uid-a');
  assert.equal((await again.userNamespace(pod('uid-d', { hostUsers: false }), ''))?.uids?.[0]?.hostId, 65536);
  // housekeeping: a pod neither known nor running (forgotten while the kubelet was down) gives its block back
  again.releaseUnknown(new Set(['uid-c', 'uid-d']));
  assert.deepEqual([...again.allocations().keys()].sort(), ['uid-c', 'uid-d']);
  assert.equal(existsSync(join(dir, 'uid-b', USERNS_MAPPINGS_FILE)), false, 'its mappings file goes with it');
});

test('idsPerPod, and a share too small for maxPods or all blocks taken: the kubelet\'s errors', async () => {
  const { rt } = make({ idsPerPod: 131072, mappings: { first: 131072, length: 131072 * 2 }, maxPods: 2 });
  assert.deepEqual((await rt.userNamespace(pod('a', { hostUsers: false }), ''))?.uids, [{ hostId: 131072, containerId: 0, length: 131072 }]);
  await rt.userNamespace(pod('b', { hostUsers: false }), '');
  await assert.rejects(rt.userNamespace(pod('c', { hostUsers: false }), ''), { message: 'could not find an empty slot to allocate a user namespace' });
  assert.throws(() => make({ mappings: { first: 65536, length: 65536 * 10 }, maxPods: 11 }), { message: 'kubelet user assigned IDs are not enough to support 11 pods' });
  assert.throws(() => make({ mappings: { first: 1000, length: 65536 * 200 } }), { message: 'kubelet user assigned ID 1000 is not a multiple of 65536' });
  assert.throws(() => make({ mappings: { first: 0, length: 65536 * 200 } }), { message: 'kubelet user assigned ID 0 must be greater or equal to 65536' });
});

test('a mappings file that is not the kubelet\'s stops the start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-userns-'));
  mkdirSync(join(dir, 'p'));
  writeFileSync(join(dir, 'p', USERNS_MAPPINGS_FILE), JSON.stringify({ uidMappings: [{ hostId: 65536, containerId: 1, length: 65536 }], gidMappings: [{ hostId: 65536, containerId: 1, length: 65536 }] }));
  assert.throws(() => make({ dir }), { message: 'record pod mappings: invalid user namespace configuration: UID 0 must be mapped' });
  writeFileSync(join(dir, 'p', USERNS_MAPPINGS_FILE), '{');
  assert.throws(() => make({ dir }), /^Error: record pod mappings: invalid user namespace mappings file/);
});

test('the kubelet\'s share of host IDs: 65536 to 2^32 without a kubelet user, else its subordinate IDs', () => {
  const files = (f: Record<string, string>) => (name: string) => f[name];
  assert.deepEqual(kubeletMappings(files({ '/etc/passwd': 'root:x:0:0::/root:/bin/sh\n' })), { first: 65536, length: 2 ** 32 - 65536 });
  const passwd = 'root:x:0:0::/root:/bin/sh\nkubelet:x:999:999::/:/usr/sbin/nologin\n';
  assert.deepEqual(kubeletMappings(files({ '/etc/passwd': passwd, '/etc/subuid': 'kubelet:65536:7208960\n', '/etc/subgid': 'kubelet:65536:7208960\n' })), { first: 65536, length: 7208960 });
  assert.throws(() => kubeletMappings(files({ '/etc/passwd': passwd, '/etc/subuid': 'kubelet:65536:7208960\n', '/etc/subgid': 'kubelet:131072:7208960\n' })), /differ/);
  assert.throws(() => kubeletMappings(files({ '/etc/passwd': passwd })), /no subordinate user IDs/);
  assert.deepEqual(subordinateIDs('a:1:2\nkubelet:3:4\n', 'kubelet'), { first: 3, length: 4 });
});
