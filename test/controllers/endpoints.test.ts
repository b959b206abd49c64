// The pure parts of the endpoints and EndpointSlice controllers: subsets from pods, repacking,
// truncation at 1000 addresses, address types, the trigger time, and which Services a pod change
// concerns. (The controllers themselves run in test/e2e/endpoints-controller.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { MAX_ENDPOINTS_CAPACITY, podSubsets, portHash, repackSubsets, subsetHash, truncateSubsets, type EndpointSubset } from '../../src/controllers/endpoints.js';
import { addressTypesOf } from '../../src/controllers/endpointslice.js';
import { TriggerTimeTracker, findPort, rfc3339Nano, servicesToUpdateOnPodChange } from '../../src/controllers/endpointsutil.js';

const pod = (name: string, ip: string, ready: boolean, extra: any = {}) => ({
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels: { app: 'a' }, resourceVersion: '1', ...(extra.metadata ?? {}) },
  spec: { nodeName: 'n1', containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] }], ...(extra.spec ?? {}) },
  status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }], ...(extra.status ?? {}) },
});
const svc = (spec: any = {}) => ({ metadata: { name: 's', namespace: 'ns', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { clusterIP: '10.0.0.10', ipFamilies: ['IPv4'], selector: { app: 'a' }, ...spec } });

test('podSubsets then repackSubsets: one subset per set of addresses offering the same ports; not ready wins', () => {
  const s = svc({ ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }, { name: 'm', port: 9090, targetPort: 9090, protocol: 'TCP' }] });
  const pods = [pod('p2', '10.0.1.2', false), pod('p1', '10.0.1.1', true), pod('p3', '10.0.1.3', true, { spec: { containers: [{ name: 'c' }] } })];
  const { subsets, ready, notReady } = podSubsets(s, pods);
  assert.equal(ready, 3);
  assert.equal(notReady, 2);
  const packed = repackSubsets(subsets);
  assert.equal(packed.length, 2);
  const http = packed.find((x) => x.ports?.[0]?.port === 8080)!;
  assert.deepEqual(http.addresses!.map((a) => a.ip), ['10.0.1.1']);
  assert.deepEqual(http.notReadyAddresses!.map((a) => a.ip), ['10.0.1.2']);
  const m = packed.find((x) => x.ports?.[0]?.port === 9090)!;
  assert.deepEqual(m.addresses!.map((a) => a.ip), ['10.0.1.1', '10.0.1.3']);
  // the same addresses for two ports: one subset with both ports
  const both = repackSubsets([
    { addresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'b', port: 2, protocol: 'TCP' }] },
    { addresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'a', port: 1, protocol: 'TCP' }] },
  ]);
  assert.equal(both.length, 1);
  // (ports, and subsets, in the order of the md5 of their Go representation, as SortSubsets sorts them)
  assert.deepEqual(both[0]!.ports!.map((p) => p.name).sort(), ['a', 'b']);
  const hashes = both[0]!.ports!.map(portHash);
  assert.deepEqual(hashes, [...hashes].sort());
  assert.equal(portHash({ name: 'http', port: 8080, protocol: 'TCP' }), createHash('md5').update('(v1.EndpointPort){Name:(string)http Port:(int32)8080 Protocol:(v1.Protocol)TCP AppProtocol:(*string)<nil>}').digest('hex'));
  const hs = packed.map(subsetHash);
  assert.deepEqual(hs, [...hs].sort());
  // the same address ready in one subset and not in another, for the same port: not ready
  const mixed = repackSubsets([
    { addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 1, protocol: 'TCP' }] },
    { notReadyAddresses: [{ ip: '10.0.0.1' }], ports: [{ port: 1, protocol: 'TCP' }] },
  ]);
  assert.deepEqual(mixed, [{ notReadyAddresses: [{ ip: '10.0.0.1' }], ports: [{ port: 1, protocol: 'TCP' }] }]);
});

test('publishNotReadyAddresses, terminal and deleted pods, IP families, named ports by protocol', () => {
  const ports = [{ port: 80, targetPort: 8080, protocol: 'TCP' }];
  const deleted = pod('d', '10.0.1.4', true, { metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' } });
  const done = pod('f', '10.0.1.5', false, { status: { phase: 'Succeeded' } });
  const v6 = pod('v6', 'fd00::1', true);
  const plain = podSubsets(svc({ ports }), [pod('p', '10.0.1.1', false), deleted, done, v6]);
  assert.deepEqual(plain.subsets.map((x) => [x.addresses?.[0]?.ip, x.notReadyAddresses?.[0]?.ip]), [[undefined, '10.0.1.1']]);
  const published = podSubsets(svc({ ports, publishNotReadyAddresses: true }), [pod('p', '10.0.1.1', false), deleted, done]);
  assert.deepEqual(published.subsets.map((x) => x.addresses?.[0]?.ip), ['10.0.1.1', '10.0.1.4']);
  const six = podSubsets(svc({ ports, clusterIP: 'fd00::10', ipFamilies: ['IPv6'] }), [pod('p', '10.0.1.1', true), v6]);
  assert.deepEqual(six.subsets.map((x) => x.addresses?.[0]?.ip), ['fd00::1']);
  assert.equal(findPort(pod('p', '10.0.1.1', true), { targetPort: 'http', protocol: 'UDP' }), undefined);
  assert.equal(findPort(pod('p', '10.0.1.1', true), { targetPort: 'http', protocol: 'TCP' }), 8080);
  // a headless Service without ports: the addresses alone
  const headless = podSubsets(svc({ clusterIP: 'None', ports: [] }), [pod('p', '10.0.1.1', true)]);
  assert.deepEqual(repackSubsets(headless.subsets), [{ addresses: [{ ip: '10.0.1.1', nodeName: 'n1', targetRef: { kind: 'Pod', namespace: 'ns', name: 'p', uid: 'uid-p' } }] }]);
});

test('truncateSubsets: not-ready addresses go first, shares rounded up; ready ones shared out when they alone are too many', () => {
  const addrs = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ ip: `${prefix}.${Math.floor(i / 250)}.${i % 250}` }));
  const a: EndpointSubset[] = [
    { addresses: addrs(600, '10.1'), notReadyAddresses: addrs(300, '10.2'), ports: [{ port: 1 }] },
    { addresses: addrs(200, '10.3'), notReadyAddresses: addrs(100, '10.4'), ports: [{ port: 2 }] },
  ];
  assert.equal(truncateSubsets(a), true);
  assert.deepEqual(a.map((s) => [s.addresses?.length, s.notReadyAddresses?.length]), [[600, 150], [200, 50]]);
  const b: EndpointSubset[] = [
    { addresses: addrs(900, '10.1'), notReadyAddresses: addrs(10, '10.2') },
    { addresses: addrs(300, '10.3') },
  ];
  assert.equal(truncateSubsets(b), true);
  assert.deepEqual(b.map((s) => [s.addresses?.length, s.notReadyAddresses?.length]), [[750, undefined], [250, undefined]]);
  const small: EndpointSubset[] = [{ addresses: addrs(MAX_ENDPOINTS_CAPACITY, '10.1') }];
  assert.equal(truncateSubsets(small), false);
});

test('address types, trigger times and the Services a pod change concerns', () => {
  assert.deepEqual(addressTypesOf(svc()), ['IPv4']);
  assert.deepEqual(addressTypesOf(svc({ ipFamilies: ['IPv6', 'IPv4'] })), ['IPv6', 'IPv4']);
  assert.deepEqual(addressTypesOf(svc({ ipFamilies: undefined, clusterIP: 'None' })), ['IPv4', 'IPv6']);
  assert.equal(rfc3339Nano(Date.parse('2026-01-01T00:00:00Z')), '2026-01-01T00:00:00Z');
  assert.equal(rfc3339Nano(Date.parse('2026-01-01T00:00:00.120Z')), '2026-01-01T00:00:00.12Z');

  const t = new TriggerTimeTracker();
  const s = svc();
  const p = pod('p', '10.0.1.1', true, { status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:01:00Z' }] } });
  // first sync: the Service's creation; then only newer changes; none: 0
  assert.equal(rfc3339Nano(t.compute(s, [p])), '2026-01-01T00:00:00Z');
  assert.equal(t.compute(s, [p]), 0);
  const later = { ...p, status: { ...p.status, conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2026-01-01T00:02:00Z' }] } };
  assert.equal(rfc3339Nano(t.compute(s, [later])), '2026-01-01T00:02:00Z');

  const services = { list: () => [svc(), { metadata: { name: 'b', namespace: 'ns' }, spec: { selector: { app: 'b' } } }, { metadata: { name: 'none', namespace: 'ns' }, spec: {} }] } as any;
  const before = pod('p', '10.0.1.1', true);
  const relabelled = { ...before, metadata: { ...before.metadata, resourceVersion: '2', labels: { app: 'b' } } };
  assert.deepEqual([...servicesToUpdateOnPodChange(services, before, relabelled)].sort(), ['ns/b', 'ns/s']);
  const annotated = { ...before, metadata: { ...before.metadata, resourceVersion: '2', annotations: { x: 'y' } } };
  assert.deepEqual([...servicesToUpdateOnPodChange(services, before, annotated)], []);
  const unready = { ...before, metadata: { ...before.metadata, resourceVersion: '2' }, status: { ...before.status, conditions: [{ type: 'Ready', status: 'False' }] } };
  assert.deepEqual([...servicesToUpdateOnPodChange(services, before, unready)], ['ns/s']);
});
