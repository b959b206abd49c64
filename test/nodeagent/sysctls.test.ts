// The kubelet's sysctl admission (src/nodeagent/sysctls.ts) on its own; a refused pod on a real
// node is in test/e2e/kubelet.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeSysctlName, SysctlAllowlist } from '../../src/nodeagent/sysctls.js';

const pod = (sysctls: string[], spec: Record<string, unknown> = {}) => ({ spec: { ...spec, securityContext: { sysctls: sysctls.map((name) => ({ name, value: '1' })) } } });

test('safe sysctls pass, unsafe ones are refused unless allowed, by name or pattern', () => {
  const none = new SysctlAllowlist([]);
  assert.equal(none.admit(pod(['net.ipv4.tcp_syncookies', 'kernel.shm_rmid_forced', 'net.ipv4.tcp_rmem'])), undefined);
  assert.equal(none.admit({ spec: {} }), undefined);
  assert.deepEqual(none.admit(pod(['net.core.somaxconn'])), { reason: 'SysctlForbidden', message: 'forbidden sysctl: "net.core.somaxconn" not allowlisted' });
  const some = new SysctlAllowlist(['net.core.somaxconn', 'kernel.msg*']);
  assert.equal(some.admit(pod(['net.core.somaxconn', 'kernel.msgmax', 'kernel/msgmnb'])), undefined);
  assert.deepEqual(some.admit(pod(['kernel.sem'])), { reason: 'SysctlForbidden', message: 'forbidden sysctl: "kernel.sem" not allowlisted' });
});

test('namespaced sysctls are refused to pods in the host\'s namespace; unknown patterns stop the kubelet', () => {
  const l = new SysctlAllowlist(['kernel.msgmax']);
  assert.deepEqual(l.admit(pod(['net.ipv4.tcp_syncookies'], { hostNetwork: true })), { reason: 'SysctlForbidden', message: 'forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host net enabled' });
  assert.deepEqual(l.admit(pod(['kernel.msgmax'], { hostIPC: true })), { reason: 'SysctlForbidden', message: 'forbidden sysctl: "kernel.msgmax" not allowed with host ipc enabled' });
  assert.equal(l.admit(pod(['kernel.msgmax'], { hostNetwork: true })), undefined);
  assert.throws(() => new SysctlAllowlist(['vm.swappiness']), /the sysctls "vm.swappiness" are not known to be namespaced/);
  assert.equal(normalizeSysctlName('net/ipv4/conf/eno2.100/rp_filter'), 'net.ipv4.conf.eno2/100.rp_filter');
  assert.equal(normalizeSysctlName('net.ipv4.conf.eno2/100.rp_filter'), 'net.ipv4.conf.eno2/100.rp_filter');
});
