// Server-side Table printers: the columns each kind's table has (names, types, formats and
// priorities as a Kubernetes 1.33 server sends them) and the cells of realistic objects.
// Pod status cases are in printers-pod.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN_KINDS } from '../../src/schema/kinds.js';
import { DEFAULT_PRINTER, canonicalQuantity, humanDuration, printedKinds, printerFor, type Printer } from '../../src/schema/printers/index.js';

const NOW = Date.parse('2025-05-01T12:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString().replace('.000Z', 'Z');
const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

function printer(group: string, kind: string): Printer {
  const p = printerFor(group, kind);
  assert.ok(p, `no printer for ${group}/${kind}`);
  return p;
}

/** "Name:type[:format][:1]" for each column; format and a priority of 1 only when present. */
function shape(p: Printer): string[] {
  return p.columns.map((c) => [c.name, c.type, ...(c.format ? [c.format] : []), ...(c.priority ? [String(c.priority)] : [])].join(':'));
}

function meta(name: string, extra: any = {}): any {
  return { name, namespace: 'default', uid: 'u-' + name, creationTimestamp: ago(3 * D + 4 * H), ...extra };
}

// -------------------------------------------------------------------------------------------------
// Age formatting

test('humanDuration follows Kubernetes duration.HumanDuration', () => {
  const cases: [number, string][] = [
    [-3 * S, '<invalid>'],
    [-2 * S, '<invalid>'],
    [-1.9 * S, '0s'],
    [-1 * S, '0s'],
    [0, '0s'],
    [999, '0s'],
    [5 * S, '5s'],
    [30 * S, '30s'],
    [119 * S, '119s'],
    [120 * S, '2m'],
    [3 * M + 12 * S, '3m12s'],
    [5 * M, '5m'],
    [9 * M + 59 * S, '9m59s'],
    [10 * M + 30 * S, '10m'],
    [100 * M, '100m'],
    [179 * M, '179m'],
    [3 * H, '3h'],
    [5 * H, '5h'],
    [7 * H + 30 * M, '7h30m'],
    [8 * H + 30 * M, '8h'],
    [47 * H, '47h'],
    [2 * D, '2d'],
    [2 * D + 3 * H, '2d3h'],
    [7 * D + 23 * H, '7d23h'],
    [8 * D + 5 * H, '8d'],
    [90 * D, '90d'],
    [729 * D, '729d'],
    [730 * D, '2y'],
    [4 * 365 * D + 120 * D, '4y120d'],
    [8 * 365 * D + 100 * D, '8y'],
    [10 * 365 * D, '10y'],
  ];
  for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, `${ms}ms`);
});

test('canonical quantities', () => {
  const cases: [unknown, string][] = [
    ['10Gi', '10Gi'],
    ['1024Mi', '1Gi'],
    ['1536Mi', '1536Mi'],
    ['2048Ki', '2Mi'],
    ['0.5Ki', '512'],
    ['1000', '1k'],
    ['1500', '1500'],
    ['1.5', '1500m'],
    ['0.1', '100m'],
    ['100m', '100m'],
    ['1000m', '1'],
    ['1e3', '1e3'],
    ['1.5e3', '1500'],
    ['5G', '5G'],
    ['0', '0'],
    ['0Gi', '0'],
    [4, '4'],
    [undefined, '0'],
    ['-1.5Gi', '-1536Mi'],
    ['not-a-quantity', 'not-a-quantity'],
  ];
  for (const [v, want] of cases) assert.equal(canonicalQuantity(v), want, String(v));
});

// -------------------------------------------------------------------------------------------------
// Coverage and the default table

test('every kind the server serves has a printer', () => {
  for (const k of BUILTIN_KINDS) {
    if (k.virtual) continue;
    assert.ok(printerFor(k.group, k.kind), `${k.group}/${k.kind}`);
  }
  for (const [g, k] of [
    ['autoscaling', 'HorizontalPodAutoscaler'],
    ['admissionregistration.k8s.io', 'MutatingWebhookConfiguration'],
    ['admissionregistration.k8s.io', 'ValidatingWebhookConfiguration'],
    ['apiextensions.k8s.io', 'CustomResourceDefinition'],
    ['node.k8s.io', 'RuntimeClass'],
    ['storage.k8s.io', 'CSIDriver'],
    ['storage.k8s.io', 'CSINode'],
    ['storage.k8s.io', 'VolumeAttachment'],
  ]) {
    assert.ok(printerFor(g, k), `${g}/${k}`);
  }
  assert.equal(printerFor('', 'NoSuchKind'), undefined);
  assert.equal(printerFor('example.com', 'Widget'), undefined);
  assert.equal(printerFor('', 'toString'), undefined);
  assert.ok(printedKinds().length > 40);
});

test('every printer: a Name column of format name, descriptions, cells as long as the columns', () => {
  for (const { group, kind } of printedKinds()) {
    const p = printer(group, kind);
    // (Kubernetes' scale columns give Name no format)
    const names = p.columns.filter((c) => c.format === (kind === 'Scale' ? '' : 'name') && c.name === 'Name');
    assert.equal(names.length, 1, `${group}/${kind}`);
    for (const c of p.columns) {
      assert.ok(c.description.length > 10, `${group}/${kind} ${c.name}`);
      assert.ok(c.priority === 0 || c.priority === 1);
      assert.ok(['string', 'integer', 'boolean', 'date', 'number'].includes(c.type));
    }
    // Robust against empty objects, and one cell per column (Kubernetes' IPAddress rows carry an
    // Age cell more than their columns declare)
    const cells = p.columns.length + (kind === 'IPAddress' ? 1 : 0);
    assert.equal(p.cells({}, NOW).length, cells, `${group}/${kind}`);
    assert.equal(p.cells({ metadata: { name: 'x', creationTimestamp: ago(5 * S) } }, NOW).length, cells);
  }
});

test('default table: NAME and CREATED AT', () => {
  assert.deepEqual(shape(DEFAULT_PRINTER), ['Name:string:name', 'Created At:date']);
  assert.deepEqual(DEFAULT_PRINTER.cells({ metadata: { name: 'edit', creationTimestamp: '2025-04-30T08:01:02Z' } }, NOW), [
    'edit',
    '2025-04-30T08:01:02Z',
  ]);
  assert.deepEqual(DEFAULT_PRINTER.cells({ metadata: { name: 'x', creationTimestamp: '2025-04-30T10:01:02+02:00' } }, NOW), [
    'x',
    '2025-04-30T08:01:02Z',
  ]);
  assert.deepEqual(DEFAULT_PRINTER.cells({ metadata: { name: 'x' } }, NOW), ['x', '0001-01-01T00:00:00Z']);
  for (const [g, k] of [
    ['', 'LimitRange'],
    ['rbac.authorization.k8s.io', 'Role'],
    ['rbac.authorization.k8s.io', 'ClusterRole'],
    ['apiextensions.k8s.io', 'CustomResourceDefinition'],
  ]) {
    assert.equal(printerFor(g, k), DEFAULT_PRINTER, `${g}/${k}`);
  }
});

// -------------------------------------------------------------------------------------------------
// core/v1

test('Node', () => {
  const p = printer('', 'Node');
  assert.deepEqual(shape(p), [
    'Name:string:name',
    'Status:string',
    'Roles:string',
    'Age:string',
    'Version:string',
    'Internal-IP:string:1',
    'External-IP:string:1',
    'OS-Image:string:1',
    'Kernel-Version:string:1',
    'Container-Runtime:string:1',
  ]);
  const node = {
    kind: 'Node',
    metadata: {
      name: 'cp-1',
      creationTimestamp: ago(40 * D),
      labels: { 'node-role.kubernetes.io/control-plane': '', 'node-role.kubernetes.io/etcd': 'true', 'kubernetes.io/hostname': 'cp-1' },
    },
    spec: { unschedulable: true },
    status: {
      conditions: [
        { type: 'MemoryPressure', status: 'False' },
        { type: 'Ready', status: 'True', reason: 'KubeletReady' },
      ],
      addresses: [
        { type: 'Hostname', address: 'cp-1' },
        { type: 'ExternalIP', address: '203.0.113.7' },
        { type: 'InternalIP', address: '10.0.0.11' },
        { type: 'InternalIP', address: '10.0.0.12' },
      ],
      nodeInfo: {
        kubeletVersion: 'v1.33.1',
        osImage: 'Ubuntu 24.04.2 LTS',
        kernelVersion: '6.8.0-60-generic',
        containerRuntimeVersion: 'containerd://2.0.5',
      },
    },
  };
  assert.deepEqual(p.cells(node, NOW), [
    'cp-1',
    'Ready,SchedulingDisabled',
    'control-plane,etcd',
    '40d',
    'v1.33.1',
    '10.0.0.11',
    '203.0.113.7',
    'Ubuntu 24.04.2 LTS',
    '6.8.0-60-generic',
    'containerd://2.0.5',
  ]);
  const st = (conditions: any[], unschedulable = false) => p.cells({ metadata: { name: 'n' }, spec: { unschedulable }, status: { conditions } }, NOW)[1];
  assert.equal(st([{ type: 'Ready', status: 'False' }]), 'NotReady');
  assert.equal(st([{ type: 'Ready', status: 'Unknown' }]), 'NotReady');
  assert.equal(st([{ type: 'Ready', status: 'False' }], true), 'NotReady,SchedulingDisabled');
  assert.equal(st([{ type: 'InvalidValue', status: 'True' }]), 'Unknown');
  assert.equal(st([{}], true), 'Unknown,SchedulingDisabled');
  assert.equal(st([{ type: 'Ready', status: 'False' }, { type: 'Ready', status: 'True' }]), 'Ready');
  const roles = (labels: any) => p.cells({ metadata: { name: 'n', labels } }, NOW)[2];
  assert.equal(roles({}), '<none>');
  assert.equal(
    roles({ 'node-role.kubernetes.io/master': '', 'node-role.kubernetes.io/control-plane': '', 'node-role.kubernetes.io/proxy': '', 'kubernetes.io/role': 'node' }),
    'control-plane,master,node,proxy',
  );
  assert.equal(roles({ 'kubernetes.io/role': 'node' }), 'node');
  assert.equal(roles({ 'node-role.kubernetes.io/': '' }), '<none>');
  assert.deepEqual(p.cells({ metadata: { name: 'bare' } }, NOW), [
    'bare',
    'Unknown',
    '<none>',
    '<unknown>',
    '',
    '<none>',
    '<none>',
    '<unknown>',
    '<unknown>',
    '<unknown>',
  ]);
});

test('Service', () => {
  const p = printer('', 'Service');
  assert.deepEqual(shape(p), [
    'Name:string:name',
    'Type:string',
    'Cluster-IP:string',
    'External-IP:string',
    'Port(s):string',
    'Age:string',
    'Selector:string:1',
  ]);
  const svc = (spec: any, status: any = {}) => ({ kind: 'Service', metadata: meta('svc'), spec, status });
  assert.deepEqual(
    p.cells(
      svc({
        type: 'ClusterIP',
        clusterIP: '10.96.0.10',
        clusterIPs: ['10.96.0.10'],
        ports: [
          { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
          { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
        ],
        selector: { 'k8s-app': 'kube-dns' },
      }),
      NOW,
    ),
    ['svc', 'ClusterIP', '10.96.0.10', '<none>', '53/UDP,53/TCP', '3d4h', 'k8s-app=kube-dns'],
  );
  assert.deepEqual(
    p.cells(svc({ type: 'NodePort', clusterIP: '10.96.1.2', ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }], externalIPs: ['1.2.3.4'] }), NOW),
    ['svc', 'NodePort', '10.96.1.2', '1.2.3.4', '80:30080/TCP', '3d4h', '<none>'],
  );
  const lb = (ingress: any[], externalIPs?: string[]) =>
    p.cells(svc({ type: 'LoadBalancer', clusterIP: '1.5.6.7', ports: [{ port: 80, protocol: 'TCP' }, { port: 8090, protocol: 'UDP' }, { port: 8000, protocol: 'TCP' }], externalIPs }, { loadBalancer: { ingress } }), NOW);
  assert.deepEqual(lb([]).slice(3, 5), ['<pending>', '80/TCP,8090/UDP,8000/TCP']);
  assert.equal(lb([{ ip: '2.3.4.5' }])[3], '2.3.4.5');
  // Tables are rendered wide on the server: a long list is not clipped.
  assert.equal(lb([{ ip: '3.4.5.6' }, { ip: '2.3.4.5' }, { ip: '5.6.7.8', hostname: 'host5678' }, { hostname: 'lb.example.com' }])[3], '2.3.4.5,3.4.5.6,5.6.7.8,lb.example.com');
  assert.equal(lb([{ ip: '2.3.4.5' }], ['9.9.9.9'])[3], '2.3.4.5,9.9.9.9');
  assert.equal(lb([], ['9.9.9.9'])[3], '9.9.9.9');
  assert.deepEqual(p.cells(svc({ type: 'ExternalName', externalName: 'db.example.com' }), NOW).slice(1, 5), [
    'ExternalName',
    '<none>',
    'db.example.com',
    '<none>',
  ]);
  assert.deepEqual(p.cells(svc({ type: 'ClusterIP', clusterIP: 'None', ports: [{ port: 5432, protocol: 'TCP' }] }), NOW).slice(1, 5), [
    'ClusterIP',
    'None',
    '<none>',
    '5432/TCP',
  ]);
  assert.equal(p.cells(svc({ type: 'Weird' }), NOW)[3], '<unknown>');
});

test('Endpoints', () => {
  const p = printer('', 'Endpoints');
  assert.deepEqual(shape(p), ['Name:string:name', 'Endpoints:string', 'Age:string']);
  const ep = (subsets: any) => p.cells({ metadata: meta('web'), subsets }, NOW)[1];
  assert.equal(ep(undefined), '<none>');
  assert.equal(ep([{ addresses: [{ ip: '10.0.0.5' }, { ip: '10.0.0.6' }], ports: [{ port: 8080, protocol: 'TCP' }] }]), '10.0.0.5:8080,10.0.0.6:8080');
  assert.equal(
    ep([{ addresses: [{ ip: '10.0.0.5' }, { ip: '10.0.0.6' }], ports: [{ port: 80 }, { port: 443 }] }]),
    '10.0.0.5:80,10.0.0.6:80,10.0.0.5:443 + 1 more...',
  );
  assert.equal(ep([{ addresses: [{ ip: '10.0.0.5' }, { ip: '10.0.0.6' }] }]), '10.0.0.5,10.0.0.6');
  assert.equal(ep([{ addresses: [{ ip: 'fd00::5' }], ports: [{ port: 80 }] }]), '[fd00::5]:80');
  assert.equal(ep([{ notReadyAddresses: [{ ip: '10.0.0.7' }], ports: [{ port: 80 }] }]), '');
  assert.deepEqual(p.cells({ metadata: meta('web'), subsets: [{ addresses: [{ ip: '10.0.0.5' }], ports: [{ port: 80 }] }] }, NOW), [
    'web',
    '10.0.0.5:80',
    '3d4h',
  ]);
});

test('Event (core/v1) and events.k8s.io/v1 Event', () => {
  const core = printer('', 'Event');
  const v1 = printer('events.k8s.io', 'Event');
  const want = [
    'Last Seen:string',
    'Type:string',
    'Reason:string',
    'Object:string',
    'Subobject:string:1',
    'Source:string:1',
    'Message:string',
    'First Seen:string:1',
    'Count:string:1',
    'Name:string:name:1',
  ];
  assert.deepEqual(shape(core), want);
  assert.deepEqual(shape(v1), want);
  const ev = {
    kind: 'Event',
    metadata: meta('web-7d4b9c-xk2p.1830c6a2b7e4f1d0'),
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-7d4b9c-xk2p', fieldPath: 'spec.containers{web}' },
    reason: 'BackOff',
    message: 'Back-off restarting failed container web in pod web-7d4b9c-xk2p_default\n',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: ago(4 * H),
    lastTimestamp: ago(30 * S),
    count: 27,
    type: 'Warning',
  };
  assert.deepEqual(core.cells(ev, NOW), [
    '30s',
    'Warning',
    'BackOff',
    'pod/web-7d4b9c-xk2p',
    'spec.containers{web}',
    'kubelet, node-1',
    'Back-off restarting failed container web in pod web-7d4b9c-xk2p_default',
    '4h',
    27,
    'web-7d4b9c-xk2p.1830c6a2b7e4f1d0',
  ]);
  // An event of the new API: no first/last timestamps, no count, a reporting controller.
  const fresh = {
    kind: 'Event',
    metadata: meta('web.1830c6a2b7e4f1d1'),
    involvedObject: { kind: 'Deployment', namespace: 'default', name: 'web' },
    reason: 'ScalingReplicaSet',
    message: 'Scaled up replica set web-7d4b9c from 0 to 3',
    source: {},
    eventTime: new Date(NOW - 4 * M).toISOString().replace('Z', '000Z'),
    reportingComponent: 'deployment-controller',
    reportingInstance: '',
    type: 'Normal',
  };
  assert.deepEqual(core.cells(fresh, NOW), [
    '4m',
    'Normal',
    'ScalingReplicaSet',
    'deployment/web',
    '',
    'deployment-controller',
    'Scaled up replica set web-7d4b9c from 0 to 3',
    '4m',
    1,
    'web.1830c6a2b7e4f1d1',
  ]);
  // A series: last seen and count come from it.
  const series = { ...fresh, series: { count: 5, lastObservedTime: new Date(NOW - 20 * S).toISOString() }, reportingInstance: 'cm-1' };
  assert.deepEqual(core.cells(series, NOW).slice(0, 9), [
    '20s',
    'Normal',
    'ScalingReplicaSet',
    'deployment/web',
    '',
    'deployment-controller, cm-1',
    'Scaled up replica set web-7d4b9c from 0 to 3',
    '4m',
    5,
  ]);
  // An event about a cluster object without a name, with no times at all.
  assert.deepEqual(core.cells({ metadata: { name: 'e' }, involvedObject: { kind: 'Node' }, count: 2 }, NOW), [
    '<unknown>',
    '',
    '',
    'node',
    '',
    '',
    '',
    '<unknown>',
    2,
    'e',
  ]);
  // The same events in the events.k8s.io/v1 representation.
  const evV1 = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: ev.metadata,
    regarding: ev.involvedObject,
    reason: ev.reason,
    note: ev.message,
    deprecatedSource: ev.source,
    deprecatedFirstTimestamp: ev.firstTimestamp,
    deprecatedLastTimestamp: ev.lastTimestamp,
    deprecatedCount: ev.count,
    type: ev.type,
    eventTime: null,
    reportingController: '',
  };
  assert.deepEqual(v1.cells(evV1, NOW), core.cells(ev, NOW));
  const freshV1 = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: fresh.metadata,
    regarding: fresh.involvedObject,
    reason: fresh.reason,
    note: fresh.message,
    eventTime: fresh.eventTime,
    reportingController: 'deployment-controller',
    reportingInstance: 'cm-1',
    series: series.series,
    type: 'Normal',
    action: 'Scaling',
  };
  assert.deepEqual(v1.cells(freshV1, NOW), core.cells(series, NOW));
});

test('Namespace, ConfigMap, Secret, ServiceAccount', () => {
  const ns = printer('', 'Namespace');
  assert.deepEqual(shape(ns), ['Name:string:name', 'Status:string', 'Age:string']);
  assert.deepEqual(ns.cells({ metadata: { name: 'kube-system', creationTimestamp: ago(400 * D) }, status: { phase: 'Active' } }, NOW), [
    'kube-system',
    'Active',
    '400d',
  ]);
  assert.deepEqual(ns.cells({ metadata: { name: 'old', creationTimestamp: ago(5 * M), deletionTimestamp: ago(S) }, status: { phase: 'Terminating' } }, NOW), [
    'old',
    'Terminating',
    '5m',
  ]);

  const cm = printer('', 'ConfigMap');
  assert.deepEqual(shape(cm), ['Name:string:name', 'Data:string', 'Age:string']);
  assert.deepEqual(cm.cells({ metadata: { name: 'x', creationTimestamp: ago(2 * S) }, data: { a: 'b' } }, NOW), ['x', 1, '2s']);
  assert.deepEqual(cm.cells({ metadata: meta('kube-root-ca.crt'), data: { 'ca.crt': '...' }, binaryData: { 'logo.png': 'iVBO' } }, NOW), [
    'kube-root-ca.crt',
    2,
    '3d4h',
  ]);
  assert.deepEqual(cm.cells({ metadata: meta('empty') }, NOW), ['empty', 0, '3d4h']);

  const secret = printer('', 'Secret');
  assert.deepEqual(shape(secret), ['Name:string:name', 'Type:string', 'Data:string', 'Age:string']);
  assert.deepEqual(
    secret.cells({ metadata: meta('tls'), type: 'kubernetes.io/tls', data: { 'tls.crt': 'LS0t', 'tls.key': 'LS0t' } }, NOW),
    ['tls', 'kubernetes.io/tls', 2, '3d4h'],
  );
  assert.deepEqual(secret.cells({ metadata: meta('s'), type: 'Opaque', data: { a: 'YQ==' }, stringData: { a: 'x', b: 'y' } }, NOW), [
    's',
    'Opaque',
    2,
    '3d4h',
  ]);

  const sa = printer('', 'ServiceAccount');
  assert.deepEqual(shape(sa), ['Name:string:name', 'Secrets:string', 'Age:string']);
  assert.deepEqual(sa.cells({ metadata: meta('default') }, NOW), ['default', 0, '3d4h']);
  assert.deepEqual(sa.cells({ metadata: meta('sa1'), secrets: [{ name: 'Secret1' }, { name: 'Secret2' }] }, NOW), ['sa1', 2, '3d4h']);
});

test('PersistentVolume and PersistentVolumeClaim', () => {
  const pv = printer('', 'PersistentVolume');
  assert.deepEqual(shape(pv), [
    'Name:string:name',
    'Capacity:string',
    'Access Modes:string',
    'Reclaim Policy:string',
    'Status:string',
    'Claim:string',
    'StorageClass:string',
    'VolumeAttributesClass:string',
    'Reason:string',
    'Age:string',
    'VolumeMode:string:1',
  ]);
  const vol = {
    kind: 'PersistentVolume',
    metadata: { name: 'pvc-3f1a', creationTimestamp: ago(12 * D) },
    spec: {
      capacity: { storage: '10Gi' },
      accessModes: ['ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: 'standard',
      volumeMode: 'Filesystem',
      claimRef: { kind: 'PersistentVolumeClaim', namespace: 'db', name: 'data-pg-0' },
    },
    status: { phase: 'Bound' },
  };
  assert.deepEqual(pv.cells(vol, NOW), ['pvc-3f1a', '10Gi', 'RWO,RWX', 'Delete', 'Bound', 'db/data-pg-0', 'standard', '<unset>', '', '12d', 'Filesystem']);
  const released = {
    metadata: { name: 'old', creationTimestamp: ago(60 * D), annotations: { 'volume.beta.kubernetes.io/storage-class': 'legacy' }, deletionTimestamp: ago(M) },
    spec: { capacity: { storage: '1024Mi' }, accessModes: ['ReadOnlyMany', 'ReadWriteOncePod'], persistentVolumeReclaimPolicy: 'Retain', storageClassName: 'ignored', volumeAttributesClassName: 'gold' },
    status: { phase: 'Failed', reason: 'VolumeFailedRecycle' },
  };
  assert.deepEqual(pv.cells(released, NOW), ['old', '1Gi', 'ROX,RWOP', 'Retain', 'Terminating', '', 'legacy', 'gold', 'VolumeFailedRecycle', '60d', '<unset>']);

  const pvc = printer('', 'PersistentVolumeClaim');
  assert.deepEqual(shape(pvc), [
    'Name:string:name',
    'Status:string',
    'Volume:string',
    'Capacity:string',
    'Access Modes:string',
    'StorageClass:string',
    'VolumeAttributesClass:string',
    'Age:string',
    'VolumeMode:string:1',
  ]);
  const bound = {
    metadata: meta('data-pg-0'),
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } }, storageClassName: 'standard', volumeName: 'pvc-3f1a', volumeMode: 'Filesystem' },
    status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '10Gi' } },
  };
  assert.deepEqual(pvc.cells(bound, NOW), ['data-pg-0', 'Bound', 'pvc-3f1a', '10Gi', 'RWO', 'standard', '<unset>', '3d4h', 'Filesystem']);
  const pending = { metadata: meta('scratch'), spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } }, status: { phase: 'Pending' } };
  assert.deepEqual(pvc.cells(pending, NOW), ['scratch', 'Pending', '', '', '', '', '<unset>', '3d4h', '<unset>']);
});

test('ReplicationController, PodTemplate, ResourceQuota', () => {
  const rc = printer('', 'ReplicationController');
  assert.deepEqual(shape(rc), [
    'Name:string:name',
    'Desired:integer',
    'Current:integer',
    'Ready:integer',
    'Age:string',
    'Containers:string:1',
    'Images:string:1',
    'Selector:string:1',
  ]);
  assert.deepEqual(
    rc.cells(
      {
        metadata: meta('nginx'),
        spec: { replicas: 3, selector: { app: 'nginx' }, template: { spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } } },
        status: { replicas: 3, readyReplicas: 2 },
      },
      NOW,
    ),
    ['nginx', 3, 3, 2, '3d4h', 'nginx', 'nginx:1.27', 'app=nginx'],
  );

  const pt = printer('', 'PodTemplate');
  assert.deepEqual(shape(pt), ['Name:string:name', 'Containers:string', 'Images:string', 'Pod Labels:string']);
  assert.deepEqual(
    pt.cells(
      {
        metadata: meta('pod-template-2'),
        template: { metadata: { labels: { foo: 'bar' } }, spec: { containers: [{ name: 'fake-container1', image: 'fake-image1' }, { name: 'fake-container2', image: 'fake-image2' }] } },
      },
      NOW,
    ),
    ['pod-template-2', 'fake-container1,fake-container2', 'fake-image1,fake-image2', 'foo=bar'],
  );

  const rq = printer('', 'ResourceQuota');
  assert.deepEqual(shape(rq), ['Name:string:name', 'Request:string', 'Limit:string', 'Age:string']);
  const quota = {
    metadata: meta('compute'),
    spec: { hard: { 'requests.cpu': '4', 'limits.cpu': '8', pods: '10' } },
    status: {
      hard: { 'requests.cpu': '4', 'requests.memory': '8Gi', 'limits.cpu': '8', 'limits.memory': '16Gi', pods: '10' },
      used: { 'requests.cpu': '1500m', 'requests.memory': '1536Mi', 'limits.cpu': '3', pods: '4' },
    },
  };
  assert.deepEqual(rq.cells(quota, NOW), [
    'compute',
    'pods: 4/10, requests.cpu: 1500m/4, requests.memory: 1536Mi/8Gi',
    'limits.cpu: 3/8, limits.memory: 0/16Gi',
    '3d4h',
  ]);
  assert.deepEqual(rq.cells({ metadata: meta('new') }, NOW), ['new', '', '', '3d4h']);
});

// -------------------------------------------------------------------------------------------------
// apps/v1

const template = {
  metadata: { labels: { app: 'web' } },
  spec: {
    containers: [
      { name: 'web', image: 'nginx:1.27' },
      { name: 'log', image: 'busybox:1.36' },
    ],
  },
};

test('Deployment', () => {
  const p = printer('apps', 'Deployment');
  assert.deepEqual(shape(p), [
    'Name:string:name',
    'Ready:string',
    'Up-to-date:string',
    'Available:string',
    'Age:string',
    'Containers:string:1',
    'Images:string:1',
    'Selector:string:1',
  ]);
  const d = {
    metadata: meta('web'),
    spec: {
      replicas: 5,
      selector: { matchLabels: { app: 'web', tier: 'front' }, matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'canary'] }, { key: 'legacy', operator: 'DoesNotExist' }] },
      template,
    },
    status: { replicas: 10, updatedReplicas: 2, readyReplicas: 3, availableReplicas: 1, unavailableReplicas: 4 },
  };
  assert.deepEqual(p.cells(d, NOW), [
    'web',
    '3/5',
    2,
    1,
    '3d4h',
    'web,log',
    'nginx:1.27,busybox:1.36',
    'app=web,env in (canary,prod),!legacy,tier=front',
  ]);
  assert.deepEqual(p.cells({ metadata: meta('new'), spec: { replicas: 1, template: { spec: { containers: [] } } } }, NOW), ['new', '0/1', 0, 0, '3d4h', '', '', '']);
  assert.equal(p.cells({ metadata: meta('bad'), spec: { selector: { matchExpressions: [{ key: 'a', operator: 'Near' }] } } }, NOW)[7], '<invalid>');
});

test('ReplicaSet, StatefulSet, DaemonSet', () => {
  const rs = printer('apps', 'ReplicaSet');
  assert.deepEqual(shape(rs), [
    'Name:string:name',
    'Desired:integer',
    'Current:integer',
    'Ready:integer',
    'Age:string',
    'Containers:string:1',
    'Images:string:1',
    'Selector:string:1',
  ]);
  assert.deepEqual(
    rs.cells(
      { metadata: meta('web-7d4b9c'), spec: { replicas: 3, selector: { matchLabels: { app: 'web', 'pod-template-hash': '7d4b9c' } }, template }, status: { replicas: 3, readyReplicas: 3 } },
      NOW,
    ),
    ['web-7d4b9c', 3, 3, 3, '3d4h', 'web,log', 'nginx:1.27,busybox:1.36', 'app=web,pod-template-hash=7d4b9c'],
  );
  assert.deepEqual(rs.cells({ metadata: meta('old'), spec: { replicas: 0, selector: {}, template }, status: { replicas: 0 } }, NOW).slice(1, 4), [0, 0, 0]);
  assert.equal(rs.cells({ metadata: meta('old'), spec: { replicas: 0, selector: {}, template } }, NOW)[7], '<none>');

  const sts = printer('apps', 'StatefulSet');
  assert.deepEqual(shape(sts), ['Name:string:name', 'Ready:string', 'Age:string', 'Containers:string:1', 'Images:string:1']);
  assert.deepEqual(sts.cells({ metadata: meta('pg'), spec: { replicas: 3, serviceName: 'pg', template }, status: { replicas: 3, readyReplicas: 2 } }, NOW), [
    'pg',
    '2/3',
    '3d4h',
    'web,log',
    'nginx:1.27,busybox:1.36',
  ]);

  const ds = printer('apps', 'DaemonSet');
  assert.deepEqual(shape(ds), [
    'Name:string:name',
    'Desired:integer',
    'Current:integer',
    'Ready:integer',
    'Up-to-date:integer',
    'Available:integer',
    'Node Selector:string',
    'Age:string',
    'Containers:string:1',
    'Images:string:1',
    'Selector:string:1',
  ]);
  assert.deepEqual(
    ds.cells(
      {
        metadata: meta('kube-proxy'),
        spec: {
          selector: { matchLabels: { 'k8s-app': 'kube-proxy' } },
          template: { spec: { nodeSelector: { 'kubernetes.io/os': 'linux' }, containers: [{ name: 'kube-proxy', image: 'registry.k8s.io/kube-proxy:v1.33.1' }] } },
        },
        status: { currentNumberScheduled: 2, desiredNumberScheduled: 3, numberReady: 1, updatedNumberScheduled: 2, numberAvailable: 0 },
      },
      NOW,
    ),
    ['kube-proxy', 3, 2, 1, 2, 0, 'kubernetes.io/os=linux', '3d4h', 'kube-proxy', 'registry.k8s.io/kube-proxy:v1.33.1', 'k8s-app=kube-proxy'],
  );
});

test('ControllerRevision', () => {
  const p = printer('apps', 'ControllerRevision');
  assert.deepEqual(shape(p), ['Name:string:name', 'Controller:string', 'Revision:string', 'Age:string']);
  const owners = [
    { apiVersion: 'v1', kind: 'Pod', name: 'not-controller', uid: 'a' },
    { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'pg', uid: 'b', controller: true },
  ];
  assert.deepEqual(p.cells({ metadata: meta('pg-5d8f7c', { ownerReferences: owners }), revision: 2, data: {} }, NOW), ['pg-5d8f7c', 'statefulset.apps/pg', 2, '3d4h']);
  assert.deepEqual(
    p.cells({ metadata: meta('x', { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'c', controller: true }] }), revision: 1 }, NOW).slice(1, 3),
    ['pod/p', 1],
  );
  assert.deepEqual(p.cells({ metadata: meta('orphan'), revision: 7 }, NOW).slice(1, 3), ['<none>', 7]);
});

// -------------------------------------------------------------------------------------------------
// batch/v1

test('Job (the 1.33 columns, with STATUS)', () => {
  const p = printer('batch', 'Job');
  assert.deepEqual(shape(p), [
    'Name:string:name',
    'Status:string',
    'Completions:string',
    'Duration:string',
    'Age:string',
    'Containers:string:1',
    'Images:string:1',
    'Selector:string:1',
  ]);
  const job = (spec: any, status: any = {}, extra: any = {}) => ({ metadata: meta('pi', extra), spec: { template, ...spec }, status });
  const uid = { matchLabels: { 'batch.kubernetes.io/controller-uid': '4b1f' } };
  assert.deepEqual(p.cells(job({ completions: 2, parallelism: 1, selector: uid }, { succeeded: 1, active: 1, startTime: ago(20 * M) }), NOW), [
    'pi',
    'Running',
    '1/2',
    '20m',
    '3d4h',
    'web,log',
    'nginx:1.27,busybox:1.36',
    'batch.kubernetes.io/controller-uid=4b1f',
  ]);
  assert.deepEqual(
    p.cells(
      job({ completions: 1 }, { succeeded: 1, startTime: ago(H), completionTime: ago(H - 30 * M), conditions: [{ type: 'SuccessCriteriaMet', status: 'True' }, { type: 'Complete', status: 'True' }] }),
      NOW,
    ).slice(1, 4),
    ['Complete', '1/1', '30m'],
  );
  assert.deepEqual(p.cells(job({}, {}), NOW).slice(1, 4), ['Running', '0/1', '']);
  assert.deepEqual(p.cells(job({ parallelism: 3 }, { succeeded: 1 }), NOW).slice(1, 4), ['Running', '1/1 of 3', '']);
  const cond = (type: string, status = 'True') => p.cells(job({ completions: 1 }, { conditions: [{ type, status }] }), NOW)[1];
  assert.equal(cond('Failed'), 'Failed');
  assert.equal(cond('Suspended'), 'Suspended');
  assert.equal(cond('FailureTarget'), 'FailureTarget');
  assert.equal(cond('Complete', 'False'), 'Running');
  assert.equal(p.cells(job({}, {}, { deletionTimestamp: ago(S) }), NOW)[1], 'Terminating');
  // Complete wins over deletion; deletion wins over suspension.
  assert.equal(p.cells(job({}, { conditions: [{ type: 'Complete', status: 'True' }] }, { deletionTimestamp: ago(S) }), NOW)[1], 'Complete');
  assert.equal(p.cells(job({}, { conditions: [{ type: 'Suspended', status: 'True' }] }, { deletionTimestamp: ago(S) }), NOW)[1], 'Terminating');
});

test('CronJob', () => {
  const p = printer('batch', 'CronJob');
  assert.deepEqual(shape(p), [
    'Name:string:name',
    'Schedule:string',
    'Timezone:string',
    'Suspend:boolean',
    'Active:integer',
    'Last Schedule:string',
    'Age:string',
    'Containers:string:1',
    'Images:string:1',
    'Selector:string:1',
  ]);
  const cj = {
    metadata: meta('backup'),
    spec: { schedule: '*/5 * * * *', suspend: false, jobTemplate: { spec: { template } } },
    status: { active: [{ kind: 'Job', name: 'backup-29100000' }], lastScheduleTime: ago(3 * M) },
  };
  assert.deepEqual(p.cells(cj, NOW), ['backup', '*/5 * * * *', '<none>', 'False', 1, '3m', '3d4h', 'web,log', 'nginx:1.27,busybox:1.36', '<none>']);
  const tz = { metadata: meta('nightly'), spec: { schedule: '0 3 * * *', timeZone: 'Europe/Paris', suspend: true, jobTemplate: { spec: { template } } }, status: {} };
  assert.deepEqual(p.cells(tz, NOW).slice(1, 6), ['0 3 * * *', 'Europe/Paris', 'True', 0, '<none>']);
  assert.equal(p.cells({ metadata: meta('x'), spec: { schedule: '@daily' } }, NOW)[3], '<unset>');
});

// -------------------------------------------------------------------------------------------------
// Other groups

test('Lease and EndpointSlice', () => {
  const lease = printer('coordination.k8s.io', 'Lease');
  assert.deepEqual(shape(lease), ['Name:string:name', 'Holder:string', 'Age:string']);
  assert.deepEqual(lease.cells({ metadata: meta('kube-scheduler'), spec: { holderIdentity: 'cp-1_8c1e', leaseDurationSeconds: 15 } }, NOW), [
    'kube-scheduler',
    'cp-1_8c1e',
    '3d4h',
  ]);
  assert.deepEqual(lease.cells({ metadata: meta('free'), spec: {} }, NOW), ['free', '', '3d4h']);

  const es = printer('discovery.k8s.io', 'EndpointSlice');
  assert.deepEqual(shape(es), ['Name:string:name', 'AddressType:string', 'Ports:string', 'Endpoints:string', 'Age:string']);
  const slice = {
    metadata: meta('web-abc12'),
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'https', port: 443 }, { name: 'metrics' }, {}, { port: 9000 }],
    endpoints: [{ addresses: ['10.0.0.5'] }, { addresses: ['10.0.0.6', '10.0.0.7'] }, { addresses: ['10.0.0.8'] }],
  };
  assert.deepEqual(es.cells(slice, NOW), ['web-abc12', 'IPv4', '80,443,metrics + 2 more...', '10.0.0.5,10.0.0.6,10.0.0.7 + 1 more...', '3d4h']);
  assert.deepEqual(es.cells({ metadata: meta('empty'), addressType: 'IPv6', ports: [{}], endpoints: [] }, NOW), ['empty', 'IPv6', '*', '<unset>', '3d4h']);
});

test('RoleBinding and ClusterRoleBinding', () => {
  for (const kind of ['RoleBinding', 'ClusterRoleBinding']) {
    const p = printer('rbac.authorization.k8s.io', kind);
    assert.deepEqual(shape(p), ['Name:string:name', 'Role:string', 'Age:string', 'Users:string:1', 'Groups:string:1', 'ServiceAccounts:string:1']);
    const b = {
      metadata: meta('admins'),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [
        { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' },
        { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'ops' },
        { kind: 'ServiceAccount', name: 'deployer', namespace: 'ci' },
        { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bob' },
        { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:masters' },
        { kind: 'ServiceAccount', name: 'default', namespace: 'kube-system' },
      ],
    };
    assert.deepEqual(p.cells(b, NOW), ['admins', 'ClusterRole/admin', '3d4h', 'alice, bob', 'ops, system:masters', 'ci/deployer, kube-system/default']);
    assert.deepEqual(p.cells({ metadata: meta('none'), roleRef: { kind: 'Role', name: 'r' } }, NOW), ['none', 'Role/r', '3d4h', '', '', '']);
  }
});

test('PodDisruptionBudget and PriorityClass', () => {
  const pdb = printer('policy', 'PodDisruptionBudget');
  assert.deepEqual(shape(pdb), ['Name:string:name', 'Min Available:string', 'Max Unavailable:string', 'Allowed Disruptions:integer', 'Age:string']);
  assert.deepEqual(pdb.cells({ metadata: meta('web'), spec: { minAvailable: 2, selector: {} }, status: { disruptionsAllowed: 1 } }, NOW), ['web', '2', 'N/A', 1, '3d4h']);
  assert.deepEqual(pdb.cells({ metadata: meta('db'), spec: { maxUnavailable: '25%' }, status: {} }, NOW), ['db', 'N/A', '25%', 0, '3d4h']);

  const pc = printer('scheduling.k8s.io', 'PriorityClass');
  assert.deepEqual(shape(pc), ['Name:string:name', 'Value:integer', 'Global-Default:boolean', 'Age:string', 'PreemptionPolicy:string']);
  assert.deepEqual(pc.cells({ metadata: { name: 'system-node-critical', creationTimestamp: ago(400 * D) }, value: 2000001000, preemptionPolicy: 'PreemptLowerPriority' }, NOW), [
    'system-node-critical',
    2000001000,
    false,
    '400d',
    'PreemptLowerPriority',
  ]);
  assert.deepEqual(pc.cells({ metadata: meta('batch-low'), value: -10, globalDefault: true, preemptionPolicy: 'Never' }, NOW).slice(1), [-10, true, '3d4h', 'Never']);
});

test('StorageClass, CSIDriver, CSINode, VolumeAttachment, RuntimeClass', () => {
  const sc = printer('storage.k8s.io', 'StorageClass');
  assert.deepEqual(shape(sc), [
    'Name:string:name',
    'Provisioner:string',
    'ReclaimPolicy:string',
    'VolumeBindingMode:string',
    'AllowVolumeExpansion:string',
    'Age:string',
  ]);
  assert.deepEqual(
    sc.cells(
      {
        metadata: { name: 'standard', creationTimestamp: ago(40 * D), annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
        provisioner: 'rancher.io/local-path',
        reclaimPolicy: 'Delete',
        volumeBindingMode: 'WaitForFirstConsumer',
      },
      NOW,
    ),
    ['standard (default)', 'rancher.io/local-path', 'Delete', 'WaitForFirstConsumer', false, '40d'],
  );
  assert.deepEqual(
    sc.cells({ metadata: { name: 'fast', annotations: { 'storageclass.beta.kubernetes.io/is-default-class': 'true' } }, provisioner: 'ebs.csi.aws.com', allowVolumeExpansion: true, reclaimPolicy: 'Retain' }, NOW),
    ['fast (default)', 'ebs.csi.aws.com', 'Retain', 'Immediate', true, '<unknown>'],
  );
  assert.deepEqual(sc.cells({ metadata: { name: 'plain' }, provisioner: 'x' }, NOW).slice(0, 5), ['plain', 'x', 'Delete', 'Immediate', false]);

  const driver = printer('storage.k8s.io', 'CSIDriver');
  assert.deepEqual(shape(driver), [
    'Name:string:name',
    'AttachRequired:boolean',
    'PodInfoOnMount:boolean',
    'StorageCapacity:boolean',
    'TokenRequests:string',
    'RequiresRepublish:boolean',
    'Modes:string',
    'Age:string',
  ]);
  assert.deepEqual(
    driver.cells(
      {
        metadata: meta('secrets-store.csi.k8s.io'),
        spec: { attachRequired: false, podInfoOnMount: true, tokenRequests: [{ audience: 'api://a' }, { audience: 'vault' }], requiresRepublish: true, volumeLifecycleModes: ['Ephemeral', 'Persistent'] },
      },
      NOW,
    ),
    ['secrets-store.csi.k8s.io', false, true, false, 'api://a,vault', true, 'Ephemeral,Persistent', '3d4h'],
  );
  assert.deepEqual(driver.cells({ metadata: meta('d'), spec: {} }, NOW), ['d', true, false, false, '<unset>', false, '<none>', '3d4h']);

  const node = printer('storage.k8s.io', 'CSINode');
  assert.deepEqual(shape(node), ['Name:string:name', 'Drivers:integer', 'Age:string']);
  assert.deepEqual(node.cells({ metadata: meta('node-1'), spec: { drivers: [{ name: 'ebs.csi.aws.com', nodeID: 'i-1' }] } }, NOW), ['node-1', 1, '3d4h']);

  const va = printer('storage.k8s.io', 'VolumeAttachment');
  assert.deepEqual(shape(va), ['Name:string:name', 'Attacher:string:name', 'PV:string', 'Node:string', 'Attached:boolean', 'Age:string']);
  assert.deepEqual(
    va.cells({ metadata: meta('csi-1a2b'), spec: { attacher: 'ebs.csi.aws.com', source: { persistentVolumeName: 'pvc-3f1a' }, nodeName: 'node-1' }, status: { attached: true } }, NOW),
    ['csi-1a2b', 'ebs.csi.aws.com', 'pvc-3f1a', 'node-1', true, '3d4h'],
  );
  assert.deepEqual(va.cells({ metadata: meta('csi-2'), spec: { attacher: 'a', source: { inlineVolumeSpec: {} }, nodeName: 'n' } }, NOW).slice(2, 5), ['', 'n', false]);

  const rc = printer('node.k8s.io', 'RuntimeClass');
  assert.deepEqual(shape(rc), ['Name:string:name', 'Handler:string', 'Age:string']);
  assert.deepEqual(rc.cells({ metadata: meta('gvisor'), handler: 'runsc' }, NOW), ['gvisor', 'runsc', '3d4h']);
});

test('Ingress, IngressClass, NetworkPolicy', () => {
  const ing = printer('networking.k8s.io', 'Ingress');
  assert.deepEqual(shape(ing), ['Name:string:name', 'Class:string', 'Hosts:string', 'Address:string', 'Ports:string', 'Age:string']);
  const rule = (host?: string) => ({ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } });
  assert.deepEqual(
    ing.cells(
      {
        metadata: meta('web'),
        spec: { ingressClassName: 'nginx', rules: [rule('a.example.com'), rule('b.example.com')], tls: [{ hosts: ['a.example.com'], secretName: 'a-tls' }] },
        status: { loadBalancer: { ingress: [{ ip: '203.0.113.9' }, { hostname: 'lb.example.net' }] } },
      },
      NOW,
    ),
    ['web', 'nginx', 'a.example.com,b.example.com', '203.0.113.9,lb.example.net', '80, 443', '3d4h'],
  );
  assert.deepEqual(ing.cells({ metadata: meta('default-backend'), spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } } }, NOW), [
    'default-backend',
    '<none>',
    '*',
    '',
    '80',
    '3d4h',
  ]);
  assert.equal(ing.cells({ metadata: meta('many'), spec: { rules: [rule('a'), rule(), rule('b'), rule('c'), rule('d')] } }, NOW)[2], 'a,b,c + 2 more...');

  const ic = printer('networking.k8s.io', 'IngressClass');
  assert.deepEqual(shape(ic), ['Name:string:name', 'Controller:string', 'Parameters:string', 'Age:string']);
  assert.deepEqual(ic.cells({ metadata: meta('nginx'), spec: { controller: 'k8s.io/ingress-nginx' } }, NOW), ['nginx', 'k8s.io/ingress-nginx', '<none>', '3d4h']);
  assert.deepEqual(
    ic.cells({ metadata: meta('ext'), spec: { controller: 'example.com/ingress', parameters: { apiGroup: 'k8s.example.com', kind: 'IngressParameters', name: 'external-lb', scope: 'Cluster' } } }, NOW)[2],
    'IngressParameters.k8s.example.com/external-lb',
  );
  assert.equal(ic.cells({ metadata: meta('cm'), spec: { controller: 'c', parameters: { kind: 'ConfigMap', name: 'cfg' } } }, NOW)[2], 'ConfigMap/cfg');

  const np = printer('networking.k8s.io', 'NetworkPolicy');
  assert.deepEqual(shape(np), ['Name:string:name', 'Pod-Selector:string', 'Age:string']);
  assert.deepEqual(np.cells({ metadata: meta('deny-all'), spec: { podSelector: {}, policyTypes: ['Ingress'] } }, NOW), ['deny-all', '<none>', '3d4h']);
  assert.deepEqual(
    np.cells({ metadata: meta('db'), spec: { podSelector: { matchLabels: { role: 'db' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['x'] }, { key: 'env', operator: 'Exists' }] } } }, NOW)[1],
    'env,role=db,tier notin (x)',
  );
});

test('CertificateSigningRequest', () => {
  const p = printer('certificates.k8s.io', 'CertificateSigningRequest');
  assert.deepEqual(shape(p), ['Name:string:name', 'Age:string', 'SignerName:string', 'Requestor:string', 'RequestedDuration:string', 'Condition:string']);
  const csr = (status: any, spec: any = {}) => ({
    metadata: { name: 'csr-8x2v', creationTimestamp: ago(90 * S) },
    spec: { signerName: 'kubernetes.io/kube-apiserver-client-kubelet', username: 'system:node:node-1', request: 'LS0t', usages: ['client auth'], ...spec },
    status,
  });
  assert.deepEqual(p.cells(csr({}), NOW), ['csr-8x2v', '90s', 'kubernetes.io/kube-apiserver-client-kubelet', 'system:node:node-1', '<none>', 'Pending']);
  assert.deepEqual(p.cells(csr({ conditions: [{ type: 'Approved', status: 'True' }], certificate: 'LS0tLS1C' }, { expirationSeconds: 86400 }), NOW).slice(4), [
    '24h',
    'Approved,Issued',
  ]);
  assert.equal(p.cells(csr({ conditions: [{ type: 'Approved', status: 'True' }, { type: 'Failed', status: 'True' }] }, { expirationSeconds: 600 }), NOW)[4], '10m');
  assert.equal(p.cells(csr({ conditions: [{ type: 'Approved', status: 'True' }, { type: 'Failed', status: 'True' }] }), NOW)[5], 'Approved,Failed');
  assert.equal(p.cells(csr({ conditions: [{ type: 'Approved', status: 'True' }, { type: 'Denied', status: 'True' }] }), NOW)[5], 'Denied');
  assert.equal(p.cells(csr({}, { signerName: '' }), NOW)[2], '<none>');
});

test('HorizontalPodAutoscaler', () => {
  const p = printer('autoscaling', 'HorizontalPodAutoscaler');
  assert.deepEqual(shape(p), [
    'Name:string:name',
    'Reference:string',
    'Targets:string',
    'MinPods:string',
    'MaxPods:string',
    'Replicas:string',
    'Age:string',
  ]);
  const hpa = (spec: any, status: any = {}) => ({
    metadata: meta('web'),
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 10, ...spec },
    status: { currentReplicas: 4, desiredReplicas: 5, ...status },
  });
  assert.deepEqual(p.cells(hpa({}), NOW), ['web', 'Deployment/web', '<none>', '<unset>', 10, 4, '3d4h']);
  const cpu80 = { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } };
  assert.equal(p.cells(hpa({ minReplicas: 2, metrics: [cpu80] }), NOW)[2], 'cpu: <unknown>/80%');
  assert.deepEqual(
    p.cells(hpa({ minReplicas: 2, metrics: [cpu80] }, { currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 50, averageValue: '120m' } } }] }), NOW).slice(2, 4),
    ['cpu: 50%/80%', '2'],
  );
  const metrics = [
    { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'AverageValue', averageValue: '100m' } } },
    { type: 'Pods', pods: { metric: { name: 'rps' }, target: { type: 'AverageValue', averageValue: '1k' } } },
    { type: 'Object', object: { metric: { name: 'hits' }, describedObject: { kind: 'Service', name: 's' }, target: { type: 'Value', value: '10' } } },
    { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' } } },
  ];
  assert.equal(p.cells(hpa({ metrics: metrics.slice(0, 2) }), NOW)[2], '<unknown>/100m (avg), <unknown>/1k');
  assert.equal(p.cells(hpa({ metrics }), NOW)[2], '<unknown>/100m (avg), <unknown>/1k + 2 more...');
  const current = [
    { type: 'External', external: { metric: { name: 'queue' }, current: { averageValue: '50m' } } },
    { type: 'Pods', pods: { metric: { name: 'rps' }, current: { averageValue: '800' } } },
  ];
  assert.equal(p.cells(hpa({ metrics: metrics.slice(0, 2) }, { currentMetrics: current }), NOW)[2], '50m/100m (avg), 800/1k');
  assert.equal(
    p.cells(hpa({ metrics: [metrics[2], metrics[3]] }, { currentMetrics: [{ type: 'Object', object: { current: { value: '12' } } }, { type: 'Resource', resource: { name: 'memory', current: { averageValue: '512Mi' } } }] }), NOW)[2],
    '12/10, memory: 512Mi/1Gi',
  );
  const container = { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', target: { type: 'Utilization' } } };
  assert.equal(p.cells(hpa({ metrics: [container] }), NOW)[2], 'cpu: <unknown>/<auto>');
  assert.equal(p.cells(hpa({ metrics: [{ type: 'Custom' }] }), NOW)[2], '<unknown type>');
  // autoscaling/v1 objects
  assert.deepEqual(
    p.cells({ metadata: meta('v1'), spec: { scaleTargetRef: { kind: 'ReplicaSet', name: 'rs' }, minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 60 }, status: { currentReplicas: 2, currentCPUUtilizationPercentage: 45 } }, NOW),
    ['v1', 'ReplicaSet/rs', 'cpu: 45%/60%', '1', 3, 2, '3d4h'],
  );
});

test('admission webhooks and policies', () => {
  for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
    const p = printer('admissionregistration.k8s.io', kind);
    assert.deepEqual(shape(p), ['Name:string:name', 'Webhooks:integer', 'Age:string']);
    assert.deepEqual(p.cells({ metadata: meta('cert-manager-webhook'), webhooks: [{ name: 'a' }, { name: 'b' }] }, NOW), ['cert-manager-webhook', 2, '3d4h']);
    assert.deepEqual(p.cells({ metadata: meta('none') }, NOW), ['none', 0, '3d4h']);
  }
  const vap = printer('admissionregistration.k8s.io', 'ValidatingAdmissionPolicy');
  assert.deepEqual(shape(vap), ['Name:string:name', 'Validations:integer', 'ParamKind:string', 'Age:string']);
  assert.deepEqual(vap.cells({ metadata: meta('replicas'), spec: { validations: [{ expression: 'true' }], paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } } }, NOW), [
    'replicas',
    1,
    'v1/ConfigMap',
    '3d4h',
  ]);
  const vapb = printer('admissionregistration.k8s.io', 'ValidatingAdmissionPolicyBinding');
  assert.deepEqual(shape(vapb), ['Name:string:name', 'PolicyName:string', 'ParamRef:string', 'Age:string']);
  const ref = (paramRef: any) => vapb.cells({ metadata: meta('b'), spec: { policyName: 'replicas', paramRef } }, NOW).slice(1, 3);
  assert.deepEqual(ref(undefined), ['replicas', '<unset>']);
  assert.deepEqual(ref({ name: 'limits', namespace: 'prod' }), ['replicas', 'prod/limits']);
  assert.deepEqual(ref({ name: 'limits' }), ['replicas', '*/limits']);
  assert.deepEqual(ref({ selector: { matchLabels: { b: '2', a: '1' } } }), [
    'replicas',
    '&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{},}',
  ]);
});

test('flow control and API services', () => {
  const fs = printer('flowcontrol.apiserver.k8s.io', 'FlowSchema');
  assert.deepEqual(shape(fs), [
    'Name:string:name',
    'PriorityLevel:string',
    'MatchingPrecedence:string',
    'DistinguisherMethod:string',
    'Age:string',
    'MissingPL:string',
  ]);
  assert.deepEqual(
    fs.cells({ metadata: meta('system-leader-election'), spec: { priorityLevelConfiguration: { name: 'leader-election' }, matchingPrecedence: 100, distinguisherMethod: { type: 'ByUser' } }, status: { conditions: [{ type: 'Dangling', status: 'False' }] } }, NOW),
    ['system-leader-election', 'leader-election', 100, 'ByUser', '3d4h', 'False'],
  );
  assert.deepEqual(fs.cells({ metadata: meta('exempt'), spec: { priorityLevelConfiguration: { name: 'exempt' }, matchingPrecedence: 1 } }, NOW).slice(3), ['<none>', '3d4h', '?']);

  const pl = printer('flowcontrol.apiserver.k8s.io', 'PriorityLevelConfiguration');
  assert.deepEqual(
    pl.cells({ metadata: meta('workload-low'), spec: { type: 'Limited', limited: { nominalConcurrencyShares: 100, limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 } } } } }, NOW),
    ['workload-low', 'Limited', 100, 128, 6, 50, '3d4h'],
  );
  assert.deepEqual(pl.cells({ metadata: meta('exempt'), spec: { type: 'Exempt', exempt: {} } }, NOW), ['exempt', 'Exempt', '<none>', '<none>', '<none>', '<none>', '3d4h']);

  const api = printer('apiregistration.k8s.io', 'APIService');
  assert.deepEqual(shape(api), ['Name:string:name', 'Service:string', 'Available:string', 'Age:string']);
  assert.deepEqual(api.cells({ metadata: meta('v1.apps'), spec: { group: 'apps', version: 'v1' }, status: { conditions: [{ type: 'Available', status: 'True', reason: 'Local' }] } }, NOW), [
    'v1.apps',
    'Local',
    'True',
    '3d4h',
  ]);
  assert.deepEqual(
    api.cells({ metadata: meta('v1beta1.metrics.k8s.io'), spec: { service: { namespace: 'kube-system', name: 'metrics-server' } }, status: { conditions: [{ type: 'Available', status: 'False', reason: 'MissingEndpoints' }] } }, NOW).slice(1, 3),
    ['kube-system/metrics-server', 'False (MissingEndpoints)'],
  );
  assert.equal(api.cells({ metadata: meta('x') }, NOW)[2], 'Unknown');
});

test('ages are measured from the given now', () => {
  const cm = printer('', 'ConfigMap');
  const o = { metadata: { name: 'x', creationTimestamp: '2025-05-01T11:59:00Z' } };
  assert.equal(cm.cells(o, NOW)[2], '60s');
  assert.equal(cm.cells(o, NOW + 9 * M)[2], '10m');
  assert.equal(cm.cells(o, NOW - 70 * S)[2], '<invalid>');
  assert.equal(cm.cells({ metadata: { name: 'x', creationTimestamp: '2025-05-01T11:59:59.999999Z' } }, NOW)[2], '0s');
});
