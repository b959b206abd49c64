// Defaulting: for each kind, a minimal object as a client sends it and the object a Kubernetes
// 1.33 API server stores for it. The expectations are written from Kubernetes' defaulting code
// and its defaults tests (the values, and which fields get them), in the JSON form the server
// writes (Go field order). Inputs go through the server's JSON normalization first, as on a write.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalize } from '../../src/codec/json.js';
import { typeForKind } from '../../src/schema/types.js';
import {
  applyDefaults,
  defaultPullPolicy,
  defaultsFor,
  generateJobSelector,
  renameJobSelector,
  hasDefaults,
  roundUpToMilli,
} from '../../src/schema/defaults/index.js';

function typeOf(group: string, version: string, kind: string): string {
  const t = typeForKind(group, version, kind);
  assert.ok(t, `${group}/${version}/${kind} is declared`);
  return t.name;
}

/** the input as the server holds it after decoding: normalized, then defaulted */
function defaulted(group: string, version: string, kind: string, input: unknown): any {
  const n = normalize(typeOf(group, version, kind), input);
  assert.equal(n.typeError, undefined);
  assert.deepEqual(n.unknown, []);
  applyDefaults(group, version, kind, n.obj);
  return n.obj;
}

/** the expected object in the server's form (normalized; the literal is written in Go order) */
function stored(group: string, version: string, kind: string, expected: unknown): any {
  const n = normalize(typeOf(group, version, kind), expected);
  assert.deepEqual(n.unknown, [], 'the expectation names only declared fields');
  return n.obj;
}

/** applyDefaults turns `input` into exactly `expected`, keys in Go order; a second pass changes nothing */
function check(group: string, version: string, kind: string, input: unknown, expected: unknown): any {
  const got = defaulted(group, version, kind, input);
  const want = stored(group, version, kind, expected);
  assert.deepEqual(got, want);
  assert.equal(JSON.stringify(got), JSON.stringify(want), 'same keys in the same order');
  const again = JSON.parse(JSON.stringify(got));
  applyDefaults(group, version, kind, again);
  assert.equal(JSON.stringify(again), JSON.stringify(got), 'defaulting is idempotent');
  return got;
}

// The container every pod template in Kubernetes' output has for `--image=nginx`.
const NGINX = {
  name: 'nginx',
  image: 'nginx',
  resources: {},
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
  imagePullPolicy: 'Always',
};
const TEMPLATE_SPEC_DEFAULTS = {
  restartPolicy: 'Always',
  terminationGracePeriodSeconds: 30,
  dnsPolicy: 'ClusterFirst',
  securityContext: {},
  schedulerName: 'default-scheduler',
};

// ---------------------------------------------------------------------------------------------
// core/v1 Pod

test('Pod: kubectl run nginx --image=nginx', () => {
  check(
    '',
    'v1',
    'Pod',
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'nginx', labels: { run: 'nginx' } },
      spec: { containers: [{ name: 'nginx', image: 'nginx', resources: {} }], restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' },
      status: {},
    },
    {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'nginx', labels: { run: 'nginx' } },
      spec: {
        containers: [NGINX],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 30,
        dnsPolicy: 'ClusterFirst',
        securityContext: {},
        schedulerName: 'default-scheduler',
        enableServiceLinks: true,
      },
      status: {},
    },
  );
});

test('Pod: requests from limits, host network ports, probes, handlers, env, ephemeral containers', () => {
  const got = check(
    '',
    'v1',
    'Pod',
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {
        hostNetwork: true,
        initContainers: [{ name: 'init', image: 'busybox:1.36', resources: { limits: { memory: '64Mi' } } }],
        containers: [
          {
            name: 'app',
            image: 'registry.example.com:5000/team/app:v2',
            ports: [{ containerPort: 8080 }, { containerPort: 9090, protocol: 'UDP', hostPort: 19090 }],
            env: [
              { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
              { name: 'PLAIN', value: 'x' },
            ],
            resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '100m' } },
            livenessProbe: { httpGet: { port: 8080 } },
            readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 5 },
            startupProbe: { grpc: { port: 9090 } },
            lifecycle: { preStop: { httpGet: { port: 'http', path: '/quit' } }, postStart: { exec: { command: ['true'] } } },
          },
        ],
        ephemeralContainers: [{ name: 'debug', image: 'busybox@sha256:' + 'a'.repeat(64), targetContainerName: 'app' }],
      },
    },
    {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'p' },
      spec: {
        initContainers: [
          {
            name: 'init',
            image: 'busybox:1.36',
            resources: { limits: { memory: '64Mi' }, requests: { memory: '64Mi' } },
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
            imagePullPolicy: 'IfNotPresent',
          },
        ],
        containers: [
          {
            name: 'app',
            image: 'registry.example.com:5000/team/app:v2',
            ports: [
              { hostPort: 8080, containerPort: 8080, protocol: 'TCP' },
              { hostPort: 19090, containerPort: 9090, protocol: 'UDP' },
            ],
            env: [
              { name: 'NODE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } },
              { name: 'PLAIN', value: 'x' },
            ],
            resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
            livenessProbe: {
              httpGet: { path: '/', port: 8080, scheme: 'HTTP' },
              timeoutSeconds: 1,
              periodSeconds: 10,
              successThreshold: 1,
              failureThreshold: 3,
            },
            readinessProbe: { tcpSocket: { port: 8080 }, timeoutSeconds: 1, periodSeconds: 5, successThreshold: 1, failureThreshold: 3 },
            startupProbe: { grpc: { port: 9090, service: '' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
            lifecycle: { postStart: { exec: { command: ['true'] } }, preStop: { httpGet: { path: '/quit', port: 'http', scheme: 'HTTP' } } },
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
            imagePullPolicy: 'IfNotPresent',
          },
        ],
        ephemeralContainers: [
          {
            name: 'debug',
            image: 'busybox@sha256:' + 'a'.repeat(64),
            resources: {},
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
            imagePullPolicy: 'IfNotPresent',
            targetContainerName: 'app',
          },
        ],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 30,
        dnsPolicy: 'ClusterFirst',
        hostNetwork: true,
        securityContext: {},
        schedulerName: 'default-scheduler',
        enableServiceLinks: true,
      },
      status: {},
    },
  );
  // the requests map is written in Go's (sorted) key order
  assert.deepEqual(Object.keys(got.spec.containers[0].resources.requests), ['cpu', 'memory']);
});

test('Pod: volumes and their sources', () => {
  check(
    '',
    'v1',
    'Pod',
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'v' },
      spec: {
        containers: [{ name: 'c', image: 'busybox:latest' }],
        volumes: [
          { name: 'scratch' },
          { name: 'cm', configMap: { name: 'settings' } },
          { name: 'sec', secret: { secretName: 'creds', defaultMode: 256 } },
          { name: 'host', hostPath: { path: '/var/log' } },
          { name: 'dapi', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
          {
            name: 'proj',
            projected: {
              sources: [
                { serviceAccountToken: { path: 'token' } },
                { downwardAPI: { items: [{ path: 'ns', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
              ],
            },
          },
          { name: 'eph', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } },
          { name: 'iscsi', iscsi: { targetPortal: '10.0.0.1:3260', iqn: 'iqn.2001-04.com.example:storage', lun: 0 } },
          { name: 'rbd', rbd: { monitors: ['10.0.0.2:6789'], image: 'foo' } },
        ],
      },
    },
    {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'v' },
      spec: {
        volumes: [
          { name: 'scratch', emptyDir: {} },
          { name: 'cm', configMap: { name: 'settings', defaultMode: 420 } },
          { name: 'sec', secret: { secretName: 'creds', defaultMode: 256 } },
          { name: 'host', hostPath: { path: '/var/log', type: '' } },
          { name: 'dapi', downwardAPI: { items: [{ path: 'labels', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.labels' } }], defaultMode: 420 } },
          {
            name: 'proj',
            projected: {
              sources: [
                { serviceAccountToken: { expirationSeconds: 3600, path: 'token' } },
                { downwardAPI: { items: [{ path: 'ns', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
              ],
              defaultMode: 420,
            },
          },
          {
            name: 'eph',
            ephemeral: {
              volumeClaimTemplate: {
                metadata: {},
                spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem' },
              },
            },
          },
          {
            name: 'iscsi',
            iscsi: { targetPortal: '10.0.0.1:3260', iqn: 'iqn.2001-04.com.example:storage', lun: 0, iscsiInterface: 'default' },
          },
          { name: 'rbd', rbd: { monitors: ['10.0.0.2:6789'], image: 'foo', pool: 'rbd', user: 'admin', keyring: '/etc/ceph/keyring' } },
        ],
        containers: [
          {
            name: 'c',
            image: 'busybox:latest',
            resources: {},
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
            imagePullPolicy: 'Always',
          },
        ],
        ...TEMPLATE_SPEC_DEFAULTS,
        enableServiceLinks: true,
      },
      status: {},
    },
  );
});

test('Pod: +default markers of the in-tree volume sources (Azure disk, ScaleIO)', () => {
  const got = defaulted('', 'v1', 'Pod', {
    metadata: { name: 'p' },
    spec: {
      containers: [],
      volumes: [
        { name: 'az', azureDisk: { diskName: 'd', diskURI: 'https://x/d.vhd' } },
        { name: 'sio', scaleIO: { gateway: 'https://gw', system: 'sys', secretRef: { name: 's' } } },
      ],
    },
  });
  assert.equal(
    JSON.stringify(got.spec.volumes[0]),
    JSON.stringify({ name: 'az', azureDisk: { diskName: 'd', diskURI: 'https://x/d.vhd', cachingMode: 'ReadWrite', fsType: 'ext4', readOnly: false, kind: 'Shared' } }),
  );
  assert.equal(
    JSON.stringify(got.spec.volumes[1]),
    JSON.stringify({ name: 'sio', scaleIO: { gateway: 'https://gw', system: 'sys', secretRef: { name: 's' }, storageMode: 'ThinProvisioned', fsType: 'xfs' } }),
  );
});

test('Pod: serviceAccount alias, negative grace period, resource rounding, pod IPs', () => {
  const got = defaulted('', 'v1', 'Pod', {
    metadata: { name: 'p', annotations: { 'pod.beta.kubernetes.io/init-containers': '[]', keep: 'me' } },
    spec: {
      serviceAccount: 'builder',
      terminationGracePeriodSeconds: -5,
      containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '100u', memory: '1.5' } } }],
      overhead: { cpu: '1n' },
    },
    status: { podIP: '10.1.2.3', hostIPs: [{ ip: '192.168.0.7' }] },
  });
  assert.equal(got.spec.serviceAccountName, 'builder');
  assert.equal(got.spec.serviceAccount, 'builder');
  assert.equal(got.spec.terminationGracePeriodSeconds, 1);
  assert.deepEqual(got.spec.containers[0].resources.requests, { cpu: '1m', memory: '1500m' });
  assert.deepEqual(got.spec.overhead, { cpu: '1m' });
  assert.deepEqual(got.metadata.annotations, { keep: 'me' });
  assert.deepEqual(got.status.podIPs, [{ ip: '10.1.2.3' }]);
  assert.equal(got.status.hostIP, '192.168.0.7');
  const keys = Object.keys(got.spec);
  assert.ok(keys.indexOf('serviceAccountName') < keys.indexOf('serviceAccount'));
  assert.ok(keys.indexOf('serviceAccount') < keys.indexOf('securityContext'));

  // serviceAccountName wins over the alias; the alias follows it
  const both = defaulted('', 'v1', 'Pod', { metadata: { name: 'p' }, spec: { serviceAccountName: 'a', serviceAccount: 'b', containers: [] } });
  assert.equal(both.spec.serviceAccount, 'a');
  // podIP is authoritative when both are given and differ
  const differ = defaulted('', 'v1', 'Pod', { metadata: { name: 'p' }, spec: { containers: [] }, status: { podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.2' }, { ip: 'fd00::2' }] } });
  assert.deepEqual(differ.status.podIPs, [{ ip: '10.0.0.1' }]);
});

test('PodTemplate: pod spec defaults only (no Pod-level defaults)', () => {
  check(
    '',
    'v1',
    'PodTemplate',
    { metadata: { name: 't' }, template: { spec: { containers: [{ name: 'c', image: 'nginx:1.27', resources: { limits: { cpu: '1' } } }] } } },
    {
      metadata: { name: 't' },
      template: {
        metadata: {},
        spec: {
          containers: [
            {
              name: 'c',
              image: 'nginx:1.27',
              resources: { limits: { cpu: '1' } },
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
              imagePullPolicy: 'IfNotPresent',
            },
          ],
          ...TEMPLATE_SPEC_DEFAULTS,
        },
      },
    },
  );
});

test('image pull policy from the tag', () => {
  const cases: [string, string][] = [
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['nginx:1.27', 'IfNotPresent'],
    ['library/nginx', 'Always'],
    ['docker.io/library/nginx:latest', 'Always'],
    ['localhost:5000/app', 'Always'],
    ['localhost:5000/app:dev', 'IfNotPresent'],
    ['gcr.io/project/app@sha256:' + 'b'.repeat(64), 'IfNotPresent'],
    ['app:latest@sha256:' + 'c'.repeat(64), 'Always'],
    ['[fd00::1]:5000/app', 'Always'],
    ['Nginx', 'IfNotPresent'], // not a valid reference: no tag
    ['MyRegistry/app', 'Always'], // an upper-case first component is a registry
    ['', 'IfNotPresent'],
  ];
  for (const [image, policy] of cases) assert.equal(defaultPullPolicy(image), policy, image);
});

test('ResourceList rounding to milli-units', () => {
  assert.equal(roundUpToMilli('100u'), '1m');
  assert.equal(roundUpToMilli('1500u'), '2m');
  assert.equal(roundUpToMilli('2000n'), '1m');
  assert.equal(roundUpToMilli('1000000n'), '1m');
  assert.equal(roundUpToMilli('250m'), '250m');
  assert.equal(roundUpToMilli('1Gi'), '1Gi');
  assert.equal(roundUpToMilli('0.0001'), '1m');
  assert.equal(roundUpToMilli('1e-6'), '1e-3');
});

// ---------------------------------------------------------------------------------------------
// core/v1: the rest

test('Service: ClusterIP from kubectl create service clusterip', () => {
  check(
    '',
    'v1',
    'Service',
    { metadata: { name: 'web', labels: { app: 'web' } }, spec: { ports: [{ name: '80-8080', port: 80, targetPort: 8080 }], selector: { app: 'web' }, type: 'ClusterIP' } },
    {
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: {
        ports: [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080 }],
        selector: { app: 'web' },
        type: 'ClusterIP',
        sessionAffinity: 'None',
        internalTrafficPolicy: 'Cluster',
      },
      status: { loadBalancer: {} },
    },
  );
  // no type, no targetPort: ClusterIP and targetPort = port; a named targetPort stays
  const got = defaulted('', 'v1', 'Service', { metadata: { name: 's' }, spec: { ports: [{ port: 443 }, { port: 80, targetPort: 'http' }] } });
  assert.deepEqual(got.spec.ports, [
    { protocol: 'TCP', port: 443, targetPort: 443 },
    { protocol: 'TCP', port: 80, targetPort: 'http' },
  ]);
  assert.equal(got.spec.type, 'ClusterIP');
});

test('Service: NodePort, LoadBalancer, ClientIP affinity, ExternalName, external IPs', () => {
  check(
    '',
    'v1',
    'Service',
    { metadata: { name: 'np' }, spec: { type: 'NodePort', ports: [{ port: 80, protocol: 'UDP' }], sessionAffinity: 'ClientIP' } },
    {
      metadata: { name: 'np' },
      spec: {
        ports: [{ protocol: 'UDP', port: 80, targetPort: 80 }],
        type: 'NodePort',
        sessionAffinity: 'ClientIP',
        externalTrafficPolicy: 'Cluster',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
        internalTrafficPolicy: 'Cluster',
      },
      status: { loadBalancer: {} },
    },
  );
  check(
    '',
    'v1',
    'Service',
    {
      metadata: { name: 'lb' },
      spec: { type: 'LoadBalancer', ports: [{ port: 443 }], sessionAffinityConfig: { clientIP: { timeoutSeconds: 5 } } },
      status: { loadBalancer: { ingress: [{ ip: '203.0.113.9' }, { hostname: 'lb.example.com' }] } },
    },
    {
      metadata: { name: 'lb' },
      spec: {
        ports: [{ protocol: 'TCP', port: 443, targetPort: 443 }],
        type: 'LoadBalancer',
        sessionAffinity: 'None',
        externalTrafficPolicy: 'Cluster',
        allocateLoadBalancerNodePorts: true,
        internalTrafficPolicy: 'Cluster',
      },
      status: { loadBalancer: { ingress: [{ ip: '203.0.113.9', ipMode: 'VIP' }, { hostname: 'lb.example.com' }] } },
    },
  );
  check(
    '',
    'v1',
    'Service',
    { metadata: { name: 'ext' }, spec: { type: 'ExternalName', externalName: 'db.example.com' } },
    { metadata: { name: 'ext' }, spec: { type: 'ExternalName', sessionAffinity: 'None', externalName: 'db.example.com' }, status: { loadBalancer: {} } },
  );
  const eip = defaulted('', 'v1', 'Service', { metadata: { name: 'e' }, spec: { externalIPs: ['198.51.100.1'], ports: [{ port: 1 }] } });
  assert.equal(eip.spec.externalTrafficPolicy, 'Cluster');
});

test('Secret: type Opaque; stringData is written into data', () => {
  check('', 'v1', 'Secret', { metadata: { name: 's' }, data: { a: 'YQ==' } }, { metadata: { name: 's' }, data: { a: 'YQ==' }, type: 'Opaque' });
  check(
    '',
    'v1',
    'Secret',
    { metadata: { name: 's' }, type: 'kubernetes.io/basic-auth', data: { username: 'b2xk', z: 'eg==' }, stringData: { username: 'admin', password: 'pässword' } },
    {
      metadata: { name: 's' },
      data: { password: Buffer.from('pässword').toString('base64'), username: 'YWRtaW4=', z: 'eg==' },
      type: 'kubernetes.io/basic-auth',
    },
  );
});

test('ConfigMap, ServiceAccount, Event, ResourceQuota: nothing beyond rounding', () => {
  check('', 'v1', 'ConfigMap', { metadata: { name: 'c' } }, { metadata: { name: 'c' } });
  check('', 'v1', 'ServiceAccount', { metadata: { name: 'sa' } }, { metadata: { name: 'sa' } });
  check(
    '',
    'v1',
    'ResourceQuota',
    { metadata: { name: 'q' }, spec: { hard: { 'requests.cpu': '10u', pods: '10' } } },
    { metadata: { name: 'q' }, spec: { hard: { 'requests.cpu': '1m', pods: '10' } }, status: {} },
  );
  assert.equal(hasDefaults('', 'v1', 'ConfigMap'), false);
  assert.equal(hasDefaults('', 'v1', 'Event'), false);
});

test('ReplicationController: selector and labels from the template, replicas 1', () => {
  check(
    '',
    'v1',
    'ReplicationController',
    { metadata: { name: 'rc' }, spec: { template: { metadata: { labels: { app: 'x', tier: 'a' } }, spec: { containers: [{ name: 'nginx', image: 'nginx' }] } } } },
    {
      metadata: { name: 'rc', labels: { app: 'x', tier: 'a' } },
      spec: {
        replicas: 1,
        selector: { app: 'x', tier: 'a' },
        template: { metadata: { labels: { app: 'x', tier: 'a' } }, spec: { containers: [NGINX], ...TEMPLATE_SPEC_DEFAULTS } },
      },
      status: { replicas: 0 },
    },
  );
  // own labels and selector are kept
  const got = defaulted('', 'v1', 'ReplicationController', {
    metadata: { name: 'rc', labels: { mine: 'y' } },
    spec: { replicas: 0, selector: { app: 'x' }, template: { metadata: { labels: { app: 'x', tier: 'a' } }, spec: { containers: [] } } },
  });
  assert.deepEqual(got.metadata.labels, { mine: 'y' });
  assert.deepEqual(got.spec.selector, { app: 'x' });
  assert.equal(got.spec.replicas, 0);
});

test('PersistentVolume and PersistentVolumeClaim', () => {
  check(
    '',
    'v1',
    'PersistentVolume',
    { metadata: { name: 'pv' }, spec: { capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' } } },
    {
      metadata: { name: 'pv' },
      spec: {
        capacity: { storage: '5Gi' },
        hostPath: { path: '/data', type: '' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        volumeMode: 'Filesystem',
      },
      status: { phase: 'Pending' },
    },
  );
  check(
    '',
    'v1',
    'PersistentVolumeClaim',
    { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    {
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem' },
      status: { phase: 'Pending' },
    },
  );
});

test('Namespace: its name label and phase Active', () => {
  check(
    '',
    'v1',
    'Namespace',
    { metadata: { name: 'team-a', labels: { z: '1', a: '2' } } },
    { metadata: { name: 'team-a', labels: { a: '2', 'kubernetes.io/metadata.name': 'team-a', z: '1' } }, spec: {}, status: { phase: 'Active' } },
  );
  // generateName: no name yet, no label
  const got = defaulted('', 'v1', 'Namespace', { metadata: { generateName: 'tmp-' } });
  assert.equal(got.metadata.labels, undefined);
});

test('Node: allocatable from capacity, podCIDRs from podCIDR', () => {
  check(
    '',
    'v1',
    'Node',
    { metadata: { name: 'n1' }, spec: { podCIDR: '10.244.1.0/24' }, status: { capacity: { cpu: '4', memory: '8Gi', pods: '110' } } },
    {
      metadata: { name: 'n1' },
      spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] },
      status: { capacity: { cpu: '4', memory: '8Gi', pods: '110' }, allocatable: { cpu: '4', memory: '8Gi', pods: '110' } },
    },
  );
  const dual = defaulted('', 'v1', 'Node', { metadata: { name: 'n' }, spec: { podCIDRs: ['10.0.0.0/24', 'fd00::/64'] } });
  assert.equal(dual.spec.podCIDR, '10.0.0.0/24');
});

test('LimitRange: container defaults from max and min', () => {
  check(
    '',
    'v1',
    'LimitRange',
    { metadata: { name: 'lr' }, spec: { limits: [{ type: 'Container', max: { cpu: '2' }, min: { memory: '64Mi' } }, { type: 'Pod', max: { cpu: '4' } }] } },
    {
      metadata: { name: 'lr' },
      spec: {
        limits: [
          { type: 'Container', max: { cpu: '2' }, min: { memory: '64Mi' }, default: { cpu: '2' }, defaultRequest: { cpu: '2', memory: '64Mi' } },
          { type: 'Pod', max: { cpu: '4' } },
        ],
      },
    },
  );
});

test('Endpoints: ports protocol TCP', () => {
  check(
    '',
    'v1',
    'Endpoints',
    { metadata: { name: 'e' }, subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }, { name: 'dns', port: 53, protocol: 'UDP' }] }] },
    { metadata: { name: 'e' }, subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80, protocol: 'TCP' }, { name: 'dns', port: 53, protocol: 'UDP' }] }] },
  );
});

// ---------------------------------------------------------------------------------------------
// apps/v1

const TEMPLATE = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx', resources: {} }] } };
const TEMPLATE_OUT = { metadata: { labels: { app: 'web' } }, spec: { containers: [NGINX], ...TEMPLATE_SPEC_DEFAULTS } };
const SELECTOR = { matchLabels: { app: 'web' } };

test('Deployment: kubectl create deployment web --image=nginx', () => {
  check(
    'apps',
    'v1',
    'Deployment',
    {
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: { replicas: 1, selector: SELECTOR, template: TEMPLATE, strategy: {} },
      status: {},
    },
    {
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: {
        replicas: 1,
        selector: SELECTOR,
        template: TEMPLATE_OUT,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
        revisionHistoryLimit: 10,
        progressDeadlineSeconds: 600,
      },
      status: {},
    },
  );
  // Recreate gets no rollingUpdate; explicit values stay
  const got = defaulted('apps', 'v1', 'Deployment', {
    metadata: { name: 'r' },
    spec: { replicas: 3, selector: SELECTOR, template: TEMPLATE, strategy: { type: 'Recreate' }, revisionHistoryLimit: 0 },
  });
  assert.deepEqual(got.spec.strategy, { type: 'Recreate' });
  assert.equal(got.spec.revisionHistoryLimit, 0);
  assert.equal(got.spec.replicas, 3);
  const partial = defaulted('apps', 'v1', 'Deployment', {
    metadata: { name: 'p' },
    spec: { selector: SELECTOR, template: TEMPLATE, strategy: { rollingUpdate: { maxSurge: 1 } } },
  });
  assert.deepEqual(partial.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: 1 } });
});

test('ReplicaSet: replicas 1', () => {
  check(
    'apps',
    'v1',
    'ReplicaSet',
    { metadata: { name: 'rs' }, spec: { selector: SELECTOR, template: TEMPLATE } },
    { metadata: { name: 'rs' }, spec: { replicas: 1, selector: SELECTOR, template: TEMPLATE_OUT }, status: { replicas: 0 } },
  );
});

test('DaemonSet: rolling update 1/0, revision history 10', () => {
  check(
    'apps',
    'v1',
    'DaemonSet',
    { metadata: { name: 'ds' }, spec: { selector: SELECTOR, template: TEMPLATE } },
    {
      metadata: { name: 'ds' },
      spec: {
        selector: SELECTOR,
        template: TEMPLATE_OUT,
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
        revisionHistoryLimit: 10,
      },
      status: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 },
    },
  );
  const onDelete = defaulted('apps', 'v1', 'DaemonSet', { metadata: { name: 'ds' }, spec: { selector: SELECTOR, template: TEMPLATE, updateStrategy: { type: 'OnDelete' } } });
  assert.deepEqual(onDelete.spec.updateStrategy, { type: 'OnDelete' });
});

test('StatefulSet: policies, update strategy, claim retention, claim templates', () => {
  check(
    'apps',
    'v1',
    'StatefulSet',
    {
      metadata: { name: 'db' },
      spec: {
        selector: SELECTOR,
        serviceName: 'db',
        template: TEMPLATE,
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      },
    },
    {
      metadata: { name: 'db' },
      spec: {
        replicas: 1,
        selector: SELECTOR,
        template: TEMPLATE_OUT,
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem' },
            status: { phase: 'Pending' },
          },
        ],
        serviceName: 'db',
        podManagementPolicy: 'OrderedReady',
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
        revisionHistoryLimit: 10,
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      },
      status: { replicas: 0, availableReplicas: 0 },
    },
  );
  // an explicit RollingUpdate type without rollingUpdate gets none
  const got = defaulted('apps', 'v1', 'StatefulSet', { metadata: { name: 'x' }, spec: { selector: SELECTOR, template: TEMPLATE, updateStrategy: { type: 'RollingUpdate' } } });
  assert.deepEqual(got.spec.updateStrategy, { type: 'RollingUpdate' });
});

test('ControllerRevision has no defaults', () => {
  assert.equal(hasDefaults('apps', 'v1', 'ControllerRevision'), false);
});

// ---------------------------------------------------------------------------------------------
// batch/v1

test('Job: kubectl create job, then the strategy selector with the uid', () => {
  const uid = '6d3f9a8e-0f4c-4a55-9d0e-2b1f7f8c9a10';
  const got = check(
    'batch',
    'v1',
    'Job',
    { kind: 'Job', apiVersion: 'batch/v1', metadata: { name: 'pi' }, spec: { template: { spec: { containers: [{ name: 'pi', image: 'perl:5.34' }], restartPolicy: 'Never' } } } },
    {
      kind: 'Job',
      apiVersion: 'batch/v1',
      metadata: { name: 'pi' },
      spec: {
        parallelism: 1,
        completions: 1,
        backoffLimit: 6,
        manualSelector: false,
        template: {
          metadata: {},
          spec: {
            containers: [
              {
                name: 'pi',
                image: 'perl:5.34',
                resources: {},
                terminationMessagePath: '/dev/termination-log',
                terminationMessagePolicy: 'File',
                imagePullPolicy: 'IfNotPresent',
              },
            ],
            restartPolicy: 'Never',
            terminationGracePeriodSeconds: 30,
            dnsPolicy: 'ClusterFirst',
            securityContext: {},
            schedulerName: 'default-scheduler',
          },
        },
        completionMode: 'NonIndexed',
        suspend: false,
        podReplacementPolicy: 'TerminatingOrFailed',
      },
      status: {},
    },
  );
  got.metadata.uid = uid;
  generateJobSelector(got);
  const labels = {
    'batch.kubernetes.io/controller-uid': uid,
    'batch.kubernetes.io/job-name': 'pi',
    'controller-uid': uid,
    'job-name': 'pi',
  };
  assert.deepEqual(got.metadata.labels, labels);
  assert.deepEqual(Object.keys(got.metadata.labels), Object.keys(labels));
  assert.deepEqual(got.spec.template.metadata.labels, labels);
  assert.deepEqual(got.spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
  const keys = Object.keys(got.spec);
  assert.deepEqual(keys, ['parallelism', 'completions', 'backoffLimit', 'selector', 'manualSelector', 'template', 'completionMode', 'suspend', 'podReplacementPolicy']);
  // creationTimestamp: null is the Go shape of an ObjectMeta not yet stored (1.33 prints it so)
  assert.deepEqual(Object.keys(got.metadata), ['name', 'creationTimestamp', 'uid', 'labels']);

  // manualSelector: true leaves selector and labels to the user
  const manual = defaulted('batch', 'v1', 'Job', {
    metadata: { name: 'm', uid },
    spec: { manualSelector: true, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [] } } },
  });
  generateJobSelector(manual);
  assert.deepEqual(manual.spec.selector, { matchLabels: { a: 'b' } });
  assert.deepEqual(manual.metadata.labels, { a: 'b' });

  // a generated name that was taken: the store names the Job again, and the labels follow
  got.metadata.name = 'pi-again';
  renameJobSelector(got, 'pi');
  for (const l of [got.metadata.labels, got.spec.template.metadata.labels]) {
    assert.equal(l['job-name'], 'pi-again');
    assert.equal(l['batch.kubernetes.io/job-name'], 'pi-again');
    assert.equal(l['controller-uid'], uid);
  }
});

test('Job: parallel and indexed variants, pod failure policy', () => {
  const par = defaulted('batch', 'v1', 'Job', { metadata: { name: 'j' }, spec: { parallelism: 3, template: { spec: { containers: [] } } } });
  assert.equal(par.spec.completions, undefined);
  assert.equal(par.spec.parallelism, 3);
  const comp = defaulted('batch', 'v1', 'Job', { metadata: { name: 'j' }, spec: { completions: 5, template: { spec: { containers: [] } } } });
  assert.equal(comp.spec.parallelism, 1);
  assert.equal(comp.spec.completions, 5);
  const perIndex = defaulted('batch', 'v1', 'Job', {
    metadata: { name: 'j' },
    spec: { completionMode: 'Indexed', completions: 2, backoffLimitPerIndex: 1, template: { spec: { containers: [] } } },
  });
  assert.equal(perIndex.spec.backoffLimit, 2147483647);
  const pfp = defaulted('batch', 'v1', 'Job', {
    metadata: { name: 'j' },
    spec: {
      podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] },
      template: { spec: { containers: [], restartPolicy: 'Never' } },
    },
  });
  assert.equal(pfp.spec.podReplacementPolicy, 'Failed');
  assert.deepEqual(pfp.spec.podFailurePolicy.rules[0].onPodConditions, [{ type: 'DisruptionTarget', status: 'True' }]);
});

test('CronJob: policy, suspend, history limits; the job template gets only pod defaults', () => {
  check(
    'batch',
    'v1',
    'CronJob',
    {
      metadata: { name: 'hello' },
      spec: { schedule: '*/1 * * * *', jobTemplate: { metadata: { name: 'hello' }, spec: { template: { spec: { containers: [{ name: 'nginx', image: 'nginx' }], restartPolicy: 'OnFailure' } } } } },
    },
    {
      metadata: { name: 'hello' },
      spec: {
        schedule: '*/1 * * * *',
        concurrencyPolicy: 'Allow',
        suspend: false,
        jobTemplate: {
          metadata: { name: 'hello' },
          spec: { template: { metadata: {}, spec: { containers: [NGINX], ...TEMPLATE_SPEC_DEFAULTS, restartPolicy: 'OnFailure' } } },
        },
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 1,
      },
      status: {},
    },
  );
});

// ---------------------------------------------------------------------------------------------
// networking, discovery, rbac, scheduling, storage, policy, coordination

test('NetworkPolicy: policy types and port protocols', () => {
  check(
    'networking.k8s.io',
    'v1',
    'NetworkPolicy',
    {
      metadata: { name: 'np' },
      spec: { podSelector: {}, ingress: [{ ports: [{ port: 80 }] }], egress: [{ ports: [{ port: 53, protocol: 'UDP' }] }] },
    },
    {
      metadata: { name: 'np' },
      spec: {
        podSelector: {},
        ingress: [{ ports: [{ protocol: 'TCP', port: 80 }] }],
        egress: [{ ports: [{ protocol: 'UDP', port: 53 }] }],
        policyTypes: ['Ingress', 'Egress'],
      },
    },
  );
  const ingressOnly = defaulted('networking.k8s.io', 'v1', 'NetworkPolicy', { metadata: { name: 'd' }, spec: { podSelector: {} } });
  assert.deepEqual(ingressOnly.spec.policyTypes, ['Ingress']);
  const explicit = defaulted('networking.k8s.io', 'v1', 'NetworkPolicy', { metadata: { name: 'd' }, spec: { podSelector: {}, policyTypes: ['Egress'] } });
  assert.deepEqual(explicit.spec.policyTypes, ['Egress']);
});

test('IngressClass parameters scope; Ingress, IPAddress, ServiceCIDR have no defaults', () => {
  check(
    'networking.k8s.io',
    'v1',
    'IngressClass',
    { metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx', parameters: { kind: 'Params', name: 'p' } } },
    { metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx', parameters: { kind: 'Params', name: 'p', scope: 'Cluster' } } },
  );
  const ingress = {
    metadata: { name: 'ing' },
    spec: { rules: [{ http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
  };
  check('networking.k8s.io', 'v1', 'Ingress', ingress, { ...ingress, status: { loadBalancer: {} } });
  assert.equal(hasDefaults('networking.k8s.io', 'v1', 'Ingress'), false);
  assert.equal(hasDefaults('networking.k8s.io', 'v1', 'IPAddress'), false);
  assert.equal(hasDefaults('networking.k8s.io', 'v1', 'ServiceCIDR'), false);
});

test('EndpointSlice: port name "" and protocol TCP', () => {
  check(
    'discovery.k8s.io',
    'v1',
    'EndpointSlice',
    { metadata: { name: 'web-abc' }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'] }], ports: [{ port: 80 }, { name: 'dns', protocol: 'UDP', port: 53 }] },
    {
      metadata: { name: 'web-abc' },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.0.0.1'], conditions: {} }],
      ports: [
        { name: '', protocol: 'TCP', port: 80 },
        { name: 'dns', protocol: 'UDP', port: 53 },
      ],
    },
  );
});

test('RBAC: roleRef apiGroup, subjects apiGroup by kind', () => {
  for (const kind of ['RoleBinding', 'ClusterRoleBinding']) {
    check(
      'rbac.authorization.k8s.io',
      'v1',
      kind,
      {
        metadata: { name: 'b' },
        subjects: [{ kind: 'User', name: 'alice' }, { kind: 'Group', name: 'devs' }, { kind: 'ServiceAccount', name: 'default', namespace: 'ns' }],
        roleRef: { kind: 'ClusterRole', name: 'view' },
      },
      {
        metadata: { name: 'b' },
        subjects: [
          { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' },
          { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' },
          { kind: 'ServiceAccount', name: 'default', namespace: 'ns' },
        ],
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      },
    );
  }
  assert.equal(hasDefaults('rbac.authorization.k8s.io', 'v1', 'ClusterRole'), false);
});

test('PriorityClass: preemptionPolicy', () => {
  check(
    'scheduling.k8s.io',
    'v1',
    'PriorityClass',
    { metadata: { name: 'high' }, value: 1000 },
    { metadata: { name: 'high' }, value: 1000, preemptionPolicy: 'PreemptLowerPriority' },
  );
});

test('StorageClass and CSIDriver', () => {
  check(
    'storage.k8s.io',
    'v1',
    'StorageClass',
    { metadata: { name: 'standard' }, provisioner: 'rancher.io/local-path' },
    { metadata: { name: 'standard' }, provisioner: 'rancher.io/local-path', reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' },
  );
  check(
    'storage.k8s.io',
    'v1',
    'CSIDriver',
    { metadata: { name: 'csi.example.com' }, spec: {} },
    {
      metadata: { name: 'csi.example.com' },
      spec: {
        attachRequired: true,
        podInfoOnMount: false,
        volumeLifecycleModes: ['Persistent'],
        storageCapacity: false,
        fsGroupPolicy: 'ReadWriteOnceWithFSType',
        requiresRepublish: false,
        seLinuxMount: false,
      },
    },
  );
});

test('VolumeAttachment: the inline volume spec gets the volume source defaults (not the PersistentVolume ones)', () => {
  check(
    'storage.k8s.io',
    'v1',
    'VolumeAttachment',
    { metadata: { name: 'va' }, spec: { attacher: 'csi.example.com', nodeName: 'n1', source: { inlineVolumeSpec: { capacity: { storage: '1u' }, rbd: { monitors: ['m'], image: 'i' } } } } },
    {
      metadata: { name: 'va' },
      spec: {
        attacher: 'csi.example.com',
        source: { inlineVolumeSpec: { capacity: { storage: '1m' }, rbd: { monitors: ['m'], image: 'i', pool: 'rbd', user: 'admin', keyring: '/etc/ceph/keyring' } } },
        nodeName: 'n1',
      },
      status: { attached: false },
    },
  );
});

test('kinds without defaults in 1.33', () => {
  for (const [g, v, k] of [
    ['policy', 'v1', 'PodDisruptionBudget'],
    ['coordination.k8s.io', 'v1', 'Lease'],
    ['certificates.k8s.io', 'v1', 'CertificateSigningRequest'],
    ['events.k8s.io', 'v1', 'Event'],
    ['node.k8s.io', 'v1', 'RuntimeClass'],
    ['storage.k8s.io', 'v1', 'CSINode'],
  ] as const) {
    assert.equal(hasDefaults(g, v, k), false, `${g}/${k}`);
  }
  const pdb = { metadata: { name: 'pdb' }, spec: { minAvailable: 1, selector: SELECTOR } };
  check('policy', 'v1', 'PodDisruptionBudget', pdb, {
    ...pdb,
    status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 },
  });
});

// ---------------------------------------------------------------------------------------------
// autoscaling

test('HorizontalPodAutoscaler v2: minReplicas, the CPU metric, behavior rules', () => {
  const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
  check(
    'autoscaling',
    'v2',
    'HorizontalPodAutoscaler',
    { metadata: { name: 'web' }, spec: { scaleTargetRef: target, maxReplicas: 5 } },
    {
      metadata: { name: 'web' },
      spec: {
        scaleTargetRef: target,
        minReplicas: 1,
        maxReplicas: 5,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }],
      },
      status: { desiredReplicas: 0 },
    },
  );
  check(
    'autoscaling',
    'v2',
    'HorizontalPodAutoscaler',
    {
      metadata: { name: 'web' },
      spec: {
        scaleTargetRef: target,
        minReplicas: 2,
        maxReplicas: 5,
        metrics: [{ type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } }],
        behavior: { scaleDown: { stabilizationWindowSeconds: 60 } },
      },
    },
    {
      metadata: { name: 'web' },
      spec: {
        scaleTargetRef: target,
        minReplicas: 2,
        maxReplicas: 5,
        metrics: [{ type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } }],
        behavior: {
          scaleUp: {
            stabilizationWindowSeconds: 0,
            selectPolicy: 'Max',
            policies: [
              { type: 'Pods', value: 4, periodSeconds: 15 },
              { type: 'Percent', value: 100, periodSeconds: 15 },
            ],
          },
          scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
        },
      },
      status: { desiredReplicas: 0 },
    },
  );
});

test('HorizontalPodAutoscaler v1: minReplicas and the CPU target', () => {
  const target = { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' };
  check(
    'autoscaling',
    'v1',
    'HorizontalPodAutoscaler',
    { metadata: { name: 'web' }, spec: { scaleTargetRef: target, maxReplicas: 3 } },
    {
      metadata: { name: 'web' },
      spec: { scaleTargetRef: target, minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 80 },
      status: { currentReplicas: 0, desiredReplicas: 0 },
    },
  );
});

// ---------------------------------------------------------------------------------------------
// admissionregistration, flowcontrol, apiextensions

test('webhook configurations', () => {
  const clientConfig = { service: { namespace: 'sys', name: 'hook', path: '/validate' }, caBundle: 'Y2E=' };
  const rule = { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] };
  check(
    'admissionregistration.k8s.io',
    'v1',
    'ValidatingWebhookConfiguration',
    { metadata: { name: 'v' }, webhooks: [{ name: 'v.example.com', clientConfig, rules: [rule], sideEffects: 'None', admissionReviewVersions: ['v1'] }] },
    {
      metadata: { name: 'v' },
      webhooks: [
        {
          name: 'v.example.com',
          clientConfig: { service: { namespace: 'sys', name: 'hook', path: '/validate', port: 443 }, caBundle: 'Y2E=' },
          rules: [{ ...rule, scope: '*' }],
          failurePolicy: 'Fail',
          matchPolicy: 'Equivalent',
          namespaceSelector: {},
          objectSelector: {},
          sideEffects: 'None',
          timeoutSeconds: 10,
          admissionReviewVersions: ['v1'],
        },
      ],
    },
  );
  check(
    'admissionregistration.k8s.io',
    'v1',
    'MutatingWebhookConfiguration',
    {
      metadata: { name: 'm' },
      webhooks: [{ name: 'm.example.com', clientConfig: { url: 'https://hook.example.com/' }, sideEffects: 'None', admissionReviewVersions: ['v1'], timeoutSeconds: 5 }],
    },
    {
      metadata: { name: 'm' },
      webhooks: [
        {
          name: 'm.example.com',
          clientConfig: { url: 'https://hook.example.com/' },
          failurePolicy: 'Fail',
          matchPolicy: 'Equivalent',
          namespaceSelector: {},
          objectSelector: {},
          sideEffects: 'None',
          timeoutSeconds: 5,
          admissionReviewVersions: ['v1'],
          reinvocationPolicy: 'Never',
        },
      ],
    },
  );
});

test('ValidatingAdmissionPolicy and its binding', () => {
  check(
    'admissionregistration.k8s.io',
    'v1',
    'ValidatingAdmissionPolicy',
    {
      metadata: { name: 'replicas' },
      spec: {
        matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] },
        validations: [{ expression: 'object.spec.replicas <= 5' }],
      },
    },
    {
      metadata: { name: 'replicas' },
      spec: {
        matchConstraints: {
          namespaceSelector: {},
          objectSelector: {},
          resourceRules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'], scope: '*' }],
          matchPolicy: 'Equivalent',
        },
        validations: [{ expression: 'object.spec.replicas <= 5' }],
        failurePolicy: 'Fail',
      },
      status: {},
    },
  );
  check(
    'admissionregistration.k8s.io',
    'v1',
    'ValidatingAdmissionPolicyBinding',
    { metadata: { name: 'b' }, spec: { policyName: 'replicas', validationActions: ['Deny'], matchResources: {} } },
    { metadata: { name: 'b' }, spec: { policyName: 'replicas', matchResources: { namespaceSelector: {}, objectSelector: {}, matchPolicy: 'Equivalent' }, validationActions: ['Deny'] } },
  );
});

test('FlowSchema and PriorityLevelConfiguration', () => {
  check(
    'flowcontrol.apiserver.k8s.io',
    'v1',
    'FlowSchema',
    { metadata: { name: 'fs' }, spec: { priorityLevelConfiguration: { name: 'pl' } } },
    { metadata: { name: 'fs' }, spec: { priorityLevelConfiguration: { name: 'pl' }, matchingPrecedence: 1000 }, status: {} },
  );
  check(
    'flowcontrol.apiserver.k8s.io',
    'v1',
    'PriorityLevelConfiguration',
    { metadata: { name: 'pl' }, spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} } } } },
    {
      metadata: { name: 'pl' },
      spec: {
        type: 'Limited',
        limited: { nominalConcurrencyShares: 30, limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } }, lendablePercent: 0 },
      },
      status: {},
    },
  );
  const exempt = defaulted('flowcontrol.apiserver.k8s.io', 'v1', 'PriorityLevelConfiguration', { metadata: { name: 'x' }, spec: { type: 'Exempt', exempt: {} } });
  assert.deepEqual(exempt.spec.exempt, { nominalConcurrencyShares: 0, lendablePercent: 0 });
  const jail = defaulted('flowcontrol.apiserver.k8s.io', 'v1', 'PriorityLevelConfiguration', {
    metadata: { name: 'j' },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 0, limitResponse: { type: 'Reject' } } },
  });
  assert.equal(jail.spec.limited.nominalConcurrencyShares, 0, 'zero is a value in v1, kept');
});

test('CustomResourceDefinition: names, conversion, storedVersions', () => {
  check(
    'apiextensions.k8s.io',
    'v1',
    'CustomResourceDefinition',
    {
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        names: { plural: 'widgets', kind: 'Widget' },
        scope: 'Namespaced',
        versions: [
          { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object' } } },
          { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
        ],
      },
    },
    {
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        scope: 'Namespaced',
        versions: [
          { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object' } } },
          { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
        ],
        conversion: { strategy: 'None' },
      },
      status: { acceptedNames: { plural: '', kind: '' }, storedVersions: ['v1'] },
    },
  );
  const hook = defaulted('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', {
    metadata: { name: 'a.b' },
    spec: {
      group: 'b',
      names: { plural: 'a', kind: 'A', singular: 'aa', listKind: 'As' },
      scope: 'Cluster',
      versions: [],
      conversion: { strategy: 'Webhook', webhook: { clientConfig: { service: { namespace: 'n', name: 's' } }, conversionReviewVersions: ['v1'] } },
    },
  });
  assert.deepEqual(hook.spec.names, { plural: 'a', singular: 'aa', kind: 'A', listKind: 'As' });
  assert.deepEqual(hook.spec.conversion.webhook.clientConfig.service, { namespace: 'n', name: 's', port: 443 });
});

// ---------------------------------------------------------------------------------------------
// the API

test('lists default each item; unknown kinds and non-objects are left alone', () => {
  const list = normalize(typeOf('', 'v1', 'SecretList'), { items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' }, type: 'tls' }] }).obj;
  applyDefaults('', 'v1', 'SecretList', list);
  assert.deepEqual(
    list.items.map((s: any) => s.type),
    ['Opaque', 'tls'],
  );
  const o = { a: 1 };
  applyDefaults('nope.example.com', 'v1', 'Thing', o);
  assert.deepEqual(o, { a: 1 });
  applyDefaults('', 'v1', 'Pod', null);
  applyDefaults('', 'v1', 'Pod', [1]);
});

test('a missing spec is created where it belongs', () => {
  const d: any = { kind: 'Deployment', apiVersion: 'apps/v1', metadata: { name: 'x' }, status: {} };
  applyDefaults('apps', 'v1', 'Deployment', d);
  assert.deepEqual(Object.keys(d), ['kind', 'apiVersion', 'metadata', 'spec', 'status']);
  assert.equal(d.spec.replicas, 1);
});

test('defaultsFor describes where defaults apply', () => {
  const dep = defaultsFor('apps', 'Deployment');
  const paths = dep.map((d) => d.path);
  for (const p of [
    'spec.replicas',
    'spec.strategy.rollingUpdate.maxSurge',
    'spec.template.spec.dnsPolicy',
    'spec.template.spec.containers[].imagePullPolicy',
    'spec.template.spec.containers[].ports[].protocol',
    'spec.template.spec.containers[].livenessProbe.httpGet.scheme',
    'spec.template.spec.volumes[].secret.defaultMode',
    'spec.template.spec.containers[].resources.limits[]',
  ]) {
    assert.ok(paths.includes(p), p);
  }
  assert.ok(!paths.includes('spec.template.spec.enableServiceLinks'), 'Pod-only defaults are not in templates');
  const port = dep.find((d) => d.path === 'spec.template.spec.containers[].ports[].protocol');
  assert.deepEqual(port, { path: 'spec.template.spec.containers[].ports[].protocol', source: 'marker', type: 'io.k8s.api.core.v1.ContainerPort', value: 'TCP' });
  assert.ok(defaultsFor('autoscaling', 'HorizontalPodAutoscaler').some((d) => d.path === 'spec.metrics'), 'v2 is the preferred version');
  assert.ok(defaultsFor('autoscaling', 'HorizontalPodAutoscaler', 'v1').some((d) => d.path === 'spec.targetCPUUtilizationPercentage'));
  assert.deepEqual(defaultsFor('', 'ConfigMap'), []);
  assert.deepEqual(defaultsFor('nope', 'Nothing'), []);
});
