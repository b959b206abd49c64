// The container environment of the node agent (nodeagent/envvars.ts), without an API server:
// `$(VAR)` expansion as Kubernetes' expansion package, the service link variables, the order and
// overriding of env entries, fieldRef and resourceFieldRef values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RESTClient } from '../../src/client/rest.js';
import {
  ContainerConfigError,
  containerResourceValue,
  expand,
  expandCommandAndArgs,
  extractFieldPath,
  formatMap,
  makeEnvironment,
  podFieldValue,
  serviceEnvVars,
  type EnvContext,
} from '../../src/nodeagent/envvars.js';

const vars = new Map([
  ['A', 'a'],
  ['EMPTY', ''],
  ['B', '$(A)'],
]);
const look = (k: string) => vars.get(k);

test('expansion: references, $$ escapes, unknown and malformed references', () => {
  const cases: [string, string][] = [
    ['$(A)', 'a'],
    ['x$(A)y$(A)', 'xaya'],
    ['$(EMPTY)', ''],
    ['$$(A)', '$(A)'],
    ['$$$(A)', '$a'],
    ['$$$$(A)', '$$(A)'],
    ['$(UNKNOWN)', '$(UNKNOWN)'],
    ['pre-$(UNKNOWN)-post', 'pre-$(UNKNOWN)-post'],
    ['$(A', '$(A'],
    ['$(A$(A)', '$(A$(A)'],
    ['$A', '$A'],
    ['$', '$'],
    ['a$', 'a$'],
    ['$$', '$'],
    ['$()', '$()'],
    ['$(B)', '$(A)'], // values are not expanded again
    ['é$(A)ü', 'éaü'],
    ['$é', '$é'],
  ];
  for (const [input, want] of cases) assert.equal(expand(input, look), want, input);
});

test('command and args are expanded against the environment, the last value of a name winning', () => {
  const env = [
    { name: 'X', value: 'one' },
    { name: 'Y', value: 'two' },
    { name: 'X', value: 'three' },
  ];
  const r = expandCommandAndArgs({ command: ['/bin/$(X)', '$$(X)'], args: ['$(Y)', '$(Z)', 'plain'] }, env);
  assert.deepEqual(r, { command: ['/bin/three', '$(X)'], args: ['two', '$(Z)', 'plain'] });
  assert.deepEqual(expandCommandAndArgs({}, env), { command: [], args: [] });
});

test('service variables: names, ports, docker links, headless services skipped', () => {
  const env = serviceEnvVars([
    {
      metadata: { name: 'my-svc' },
      spec: {
        clusterIP: '10.0.0.11',
        ports: [
          { name: 'http', port: 80, protocol: 'TCP' },
          { name: 'dns-udp', port: 53, protocol: 'UDP' },
        ],
      },
    },
    { metadata: { name: 'headless' }, spec: { clusterIP: 'None', ports: [{ port: 1 }] } },
    { metadata: { name: 'external' }, spec: { type: 'ExternalName', externalName: 'x.example.com' } },
    { metadata: { name: 'v6' }, spec: { clusterIP: 'fd00::1', ports: [{ port: 443 }] } },
  ]);
  assert.deepEqual(env, [
    { name: 'MY_SVC_SERVICE_HOST', value: '10.0.0.11' },
    { name: 'MY_SVC_SERVICE_PORT', value: '80' },
    { name: 'MY_SVC_SERVICE_PORT_HTTP', value: '80' },
    { name: 'MY_SVC_SERVICE_PORT_DNS_UDP', value: '53' },
    { name: 'MY_SVC_PORT', value: 'tcp://10.0.0.11:80' },
    { name: 'MY_SVC_PORT_80_TCP', value: 'tcp://10.0.0.11:80' },
    { name: 'MY_SVC_PORT_80_TCP_PROTO', value: 'tcp' },
    { name: 'MY_SVC_PORT_80_TCP_PORT', value: '80' },
    { name: 'MY_SVC_PORT_80_TCP_ADDR', value: '10.0.0.11' },
    { name: 'MY_SVC_PORT_53_UDP', value: 'udp://10.0.0.11:53' },
    { name: 'MY_SVC_PORT_53_UDP_PROTO', value: 'udp' },
    { name: 'MY_SVC_PORT_53_UDP_PORT', value: '53' },
    { name: 'MY_SVC_PORT_53_UDP_ADDR', value: '10.0.0.11' },
    { name: 'V6_SERVICE_HOST', value: 'fd00::1' },
    { name: 'V6_SERVICE_PORT', value: '443' },
    { name: 'V6_PORT', value: 'tcp://[fd00::1]:443' },
    { name: 'V6_PORT_443_TCP', value: 'tcp://[fd00::1]:443' },
    { name: 'V6_PORT_443_TCP_PROTO', value: 'tcp' },
    { name: 'V6_PORT_443_TCP_PORT', value: '443' },
    { name: 'V6_PORT_443_TCP_ADDR', value: 'fd00::1' },
  ]);
});

const POD = {
  metadata: {
    name: 'web-0',
    namespace: 'shop',
    uid: '1b4e28ba-2fa1-11d2-883f-0016d3cca427',
    labels: { app: 'web', tier: 'front' },
    annotations: { 'example.com/note': 'say "hi"\n', b: 'x' },
  },
  spec: {
    nodeName: 'node-1',
    serviceAccountName: 'builder',
    containers: [
      { name: 'main', resources: { limits: { cpu: '250m', memory: '64Mi' }, requests: { cpu: '100m', memory: '32Mi', 'ephemeral-storage': '1Gi' } } },
      { name: 'side', resources: { requests: { cpu: '1' } } },
    ],
    initContainers: [{ name: 'setup', resources: { limits: { memory: '1G' } } }],
  },
};
const ALLOC = { cpu: '3800m', memory: '7Gi', 'ephemeral-storage': '50Gi', pods: '110' };

test('fieldRef values', () => {
  const ctx = { hostIPs: ['192.168.1.5', 'fd00::5'], podIPs: ['fd00:10::7', '10.1.0.7'] };
  const v = (fieldPath: string) => podFieldValue({ apiVersion: 'v1', fieldPath }, POD, ctx);
  assert.equal(v('metadata.name'), 'web-0');
  assert.equal(v('metadata.namespace'), 'shop');
  assert.equal(v('metadata.uid'), '1b4e28ba-2fa1-11d2-883f-0016d3cca427');
  assert.equal(v("metadata.labels['app']"), 'web');
  assert.equal(v("metadata.labels['missing']"), '');
  assert.equal(v("metadata.annotations['example.com/note']"), 'say "hi"\n');
  assert.equal(v('metadata.labels'), 'app="web"\ntier="front"');
  assert.equal(v('metadata.annotations'), 'b="x"\nexample.com/note="say \\"hi\\"\\n"');
  assert.equal(v('spec.nodeName'), 'node-1');
  assert.equal(v('spec.host'), 'node-1');
  assert.equal(v('spec.serviceAccountName'), 'builder');
  assert.equal(v('status.hostIP'), '192.168.1.5');
  assert.equal(v('status.hostIPs'), '192.168.1.5,fd00::5');
  // the node's family first
  assert.equal(v('status.podIP'), '10.1.0.7');
  assert.equal(v('status.podIPs'), '10.1.0.7,fd00:10::7');
  assert.throws(() => v('spec.containers'), { message: 'field label not supported: spec.containers' });
  assert.throws(() => v("spec.nodeName['x']"), { message: "field label does not support subscript: spec.nodeName['x']" });
  assert.throws(() => v('status.phase'), { message: 'unsupported fieldPath: status.phase' });
  assert.throws(() => podFieldValue({ apiVersion: 'v2', fieldPath: 'metadata.name' }, POD, ctx), { message: 'unsupported pod version: v2' });
  assert.throws(() => podFieldValue({ fieldPath: 'status.hostIP' }, POD, { hostIPs: [], podIPs: [] }), { message: 'host IP unknown; known addresses: []' });
  assert.throws(() => extractFieldPath(POD, "metadata.labels['bad key']"), /^Error: invalid key subscript in metadata\.labels\['bad key'\]: name part must consist of/);
  assert.equal(formatMap({}), '');
});

test('resourceFieldRef values: divisors rounding up, requests, allocatable for missing limits, other containers', () => {
  const c = POD.spec.containers[0];
  const r = (resource: string, divisor?: string, containerName?: string, container: any = c) => containerResourceValue({ resource, divisor, containerName }, POD, container, ALLOC);
  assert.equal(r('limits.cpu'), '1'); // 250m rounds up to one core
  assert.equal(r('limits.cpu', '1m'), '250');
  assert.equal(r('limits.cpu', '100m'), '3');
  assert.equal(r('limits.cpu', '0'), '1'); // a zero divisor is the default 1
  assert.equal(r('requests.cpu', '1m'), '100');
  assert.equal(r('limits.memory'), String(64 * 1024 * 1024));
  assert.equal(r('limits.memory', '1Mi'), '64');
  assert.equal(r('limits.memory', '1M'), '68'); // 67.108864 MB, rounded up
  assert.equal(r('requests.memory', '1Ki'), String(32 * 1024));
  assert.equal(r('requests.ephemeral-storage', '1Mi'), '1024');
  // no limit: the node's allocatable
  assert.equal(r('limits.ephemeral-storage', '1Gi'), '50');
  assert.equal(r('limits.cpu', '1m', 'side'), '3800');
  assert.equal(r('limits.memory', '1Gi', 'side'), '7');
  assert.equal(r('requests.memory', '1', 'side'), '0');
  assert.equal(r('limits.memory', '1M', 'setup'), '1000');
  assert.throws(() => r('limits.cpu', undefined, 'nope'), { message: 'container nope not found' });
  assert.throws(() => r('limits.pods'), { message: 'unsupported container resource : limits.pods' });
});

const noClient = {} as RESTClient;

function ctxWith(services: Record<string, any[]>, extra: Partial<EnvContext> = {}): EnvContext {
  return {
    client: noClient,
    nodeName: 'node-1',
    hostIPs: ['192.168.1.5'],
    podIPs: ['10.1.0.7'],
    nodeAllocatable: ALLOC,
    listServices: async (ns) => services[ns] ?? [],
    ...extra,
  };
}

const KUBERNETES = { metadata: { name: 'kubernetes', namespace: 'default' }, spec: { clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP' }] } };
const OTHER_DEFAULT = { metadata: { name: 'other', namespace: 'default' }, spec: { clusterIP: '10.96.0.9', ports: [{ port: 9 }] } };
const DB = { metadata: { name: 'db', namespace: 'shop' }, spec: { clusterIP: '10.96.5.5', ports: [{ port: 5432 }] } };

test('makeEnvironment: order, expansion against earlier vars and services, overriding, service links', async () => {
  const ctx = ctxWith({ default: [KUBERNETES, OTHER_DEFAULT], shop: [DB] });
  const container = {
    name: 'main',
    resources: POD.spec.containers[0].resources,
    env: [
      { name: 'FIRST', value: 'one' },
      { name: 'LATER_REF', value: '$(SECOND)' }, // defined after: stays as written
      { name: 'SECOND', value: '$(FIRST)-two' },
      { name: 'DB_URL', value: 'postgres://$(DB_SERVICE_HOST):$(DB_SERVICE_PORT)' },
      { name: 'ESCAPED', value: '$$(FIRST)' },
      { name: 'EMPTY' },
      { name: 'NODE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } },
      { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
      { name: 'FIRST', value: 'replaced' },
      { name: 'DB_SERVICE_PORT', value: '6000' },
    ],
  };
  const env = await makeEnvironment(POD, container, ctx);
  assert.deepEqual(env.slice(0, 9), [
    { name: 'FIRST', value: 'replaced' },
    { name: 'LATER_REF', value: '$(SECOND)' },
    { name: 'SECOND', value: 'one-two' },
    { name: 'DB_URL', value: 'postgres://10.96.5.5:5432' },
    { name: 'ESCAPED', value: '$(FIRST)' },
    { name: 'EMPTY', value: '' },
    { name: 'NODE', value: 'node-1' },
    { name: 'MEM', value: '64' },
    { name: 'DB_SERVICE_PORT', value: '6000' },
  ]);
  const names = env.map((e) => e.name);
  // the service variables follow, without those env defined
  assert.equal(names.filter((n) => n === 'DB_SERVICE_PORT').length, 1);
  assert.ok(names.includes('DB_SERVICE_HOST'));
  assert.ok(names.includes('KUBERNETES_SERVICE_HOST'));
  assert.ok(names.includes('KUBERNETES_PORT_443_TCP_ADDR'));
  // only the master service of default
  assert.ok(!names.some((n) => n.startsWith('OTHER_')));
  assert.equal(env.find((e) => e.name === 'KUBERNETES_SERVICE_PORT_HTTPS')?.value, '443');
  // enableServiceLinks false: the master service only
  const noLinks = await makeEnvironment({ ...POD, spec: { ...POD.spec, enableServiceLinks: false } }, { name: 'main' }, ctx);
  assert.ok(noLinks.some((e) => e.name === 'KUBERNETES_SERVICE_HOST'));
  assert.ok(!noLinks.some((e) => e.name.startsWith('DB_')));
  // a pod of default sees the other services of default
  const inDefault = await makeEnvironment({ ...POD, metadata: { ...POD.metadata, namespace: 'default' } }, { name: 'main' }, ctx);
  assert.ok(inDefault.some((e) => e.name === 'OTHER_SERVICE_HOST'));
});

test('makeEnvironment: failures are ContainerConfigErrors worded as the kubelet', async () => {
  const failing = ctxWith({}, { listServices: async () => Promise.reject(new Error('down')) });
  await assert.rejects(makeEnvironment(POD, { name: 'main' }, failing), (e: unknown) => e instanceof ContainerConfigError && e.message === 'failed to list services when setting up env vars');
  const ctx = ctxWith({});
  await assert.rejects(
    makeEnvironment(POD, { name: 'main', env: [{ name: 'X', valueFrom: { fieldRef: { fieldPath: 'spec.nope' } } }] }, ctx),
    (e: unknown) => e instanceof ContainerConfigError && e.message === 'field label not supported: spec.nope',
  );
});
