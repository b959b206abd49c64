// isGlobalUnicastIP: Go's net.IP.IsGlobalUnicast, which kube-apiserver asks of a pod's IP before it
// proxies to it (pods/proxy answers 400 "address not allowed" otherwise).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isGlobalUnicastIP } from '../../src/schema/validation/util.js';

test('isGlobalUnicastIP: private and public addresses are; unspecified, loopback, multicast, link-local and broadcast are not', () => {
  for (const ip of ['10.1.2.3', '192.168.0.1', '8.8.8.8', '010.001.002.003', '2001:db8::1', 'fd00::5', '::ffff:10.0.0.1']) assert.equal(isGlobalUnicastIP(ip), true, ip);
  for (const ip of ['0.0.0.0', '255.255.255.255', '127.0.0.1', '127.8.9.10', '224.0.0.1', '239.1.1.1', '169.254.1.1', '::', '::1', 'ff02::1', 'fe80::1', 'febf::1', '::ffff:127.0.0.1', '', 'x', '1.2.3', '256.1.1.1']) {
    assert.equal(isGlobalUnicastIP(ip), false, ip);
  }
});
