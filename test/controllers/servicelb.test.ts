// ServiceLB's pure parts: which LoadBalancer Services get the node's address (first come, first
// served per port and protocol), which ingresses are its own, and the node's address.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assignIngresses, ingressIsOurs, isOurLoadBalancer, nodeAddress, SERVICELB_MANAGER } from '../../src/controllers/servicelb.js';

const svc = (name: string, created: string, ports: { port: number; protocol?: string }[], spec: Record<string, unknown> = {}, ns = 'default') => ({
  metadata: { namespace: ns, name, creationTimestamp: created },
  spec: { type: 'LoadBalancer', ports, ...spec },
});

test('ports go to the earliest Service (then by namespace/name); a Service with any port taken gets none, with the holder named', () => {
  const services = [
    svc('late', '2026-01-01T00:00:05Z', [{ port: 80 }]),
    svc('early', '2026-01-01T00:00:01Z', [{ port: 80 }, { port: 53, protocol: 'UDP' }]),
    svc('b', '2026-01-01T00:00:02Z', [{ port: 53, protocol: 'TCP' }]),
    svc('a', '2026-01-01T00:00:02Z', [{ port: 53, protocol: 'TCP' }, { port: 81 }]),
    svc('classy', '2026-01-01T00:00:00Z', [{ port: 81 }], { loadBalancerClass: 'example.com/lb' }),
    svc('plain', '2026-01-01T00:00:00Z', [{ port: 82 }], { type: 'ClusterIP' }),
  ];
  const { ingress, conflicts } = assignIngresses(services, '192.0.2.1');
  assert.deepEqual([...ingress.keys()].sort(), ['default/a', 'default/early']);
  assert.deepEqual(ingress.get('default/early'), [{ ip: '192.0.2.1', ipMode: 'VIP', ports: [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }] }]);
  assert.deepEqual(Object.fromEntries(conflicts), { 'default/late': { port: '80/TCP', holder: 'default/early' }, 'default/b': { port: '53/TCP', holder: 'default/a' } });
  assert.equal(isOurLoadBalancer(services[4]), false);
  assert.equal(isOurLoadBalancer({ ...services[0], metadata: { ...services[0]!.metadata, deletionTimestamp: '2026-01-01T00:00:09Z' } }), false);
});

test('its own ingress: its field manager owns status.loadBalancer.ingress; the node\'s address: InternalIP (IPv4 first), else ExternalIP', () => {
  const withFields = (manager: string, fields: object) => ({ metadata: { managedFields: [{ manager, operation: 'Update', subresource: 'status', fieldsType: 'FieldsV1', fieldsV1: fields }] }, status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } } });
  assert.equal(ingressIsOurs(withFields(SERVICELB_MANAGER, { 'f:status': { 'f:loadBalancer': { 'f:ingress': {} } } })), true);
  assert.equal(ingressIsOurs(withFields('someone-else', { 'f:status': { 'f:loadBalancer': { 'f:ingress': {} } } })), false);
  assert.equal(ingressIsOurs(withFields(SERVICELB_MANAGER, { 'f:status': { 'f:conditions': {} } })), false);
  assert.equal(ingressIsOurs({ ...withFields(SERVICELB_MANAGER, { 'f:status': { 'f:loadBalancer': { 'f:ingress': {} } } }), status: { loadBalancer: {} } }), false);
  assert.equal(nodeAddress({ status: { addresses: [{ type: 'Hostname', address: 'n' }, { type: 'InternalIP', address: 'fd00::2' }, { type: 'InternalIP', address: '192.0.2.2' }] } }), '192.0.2.2');
  assert.equal(nodeAddress({ status: { addresses: [{ type: 'ExternalIP', address: '198.51.100.2' }] } }), '198.51.100.2');
  assert.equal(nodeAddress(undefined), undefined);
});
