// trackUpdate: the managed fields of creates, updates and non-apply patches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { trackUpdate, defaultFieldManager, managerOrUserAgent, validateFieldManager, resetFieldsFor } from '../../src/patch/ssa/index.js';
import { normalize } from '../../src/codec/json.js';

const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment';
const CONFIGMAP = 'io.k8s.api.core.v1.ConfigMap';
const T0 = '2026-08-15T10:04:57Z';
const T1 = '2026-08-15T10:05:01Z';
const T2 = '2026-08-15T10:06:00Z';
const T3 = '2026-08-15T10:07:00Z';

const LAC =
  '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"labels":{"app":"nginx"},"name":"nginx-deployment","namespace":"default"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"image":"nginx:latest","name":"nginx","ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"500m","memory":"512Mi"},"requests":{"cpu":"250m","memory":"256Mi"}}}]}}}}\n';

/** The Deployment `kubectl apply` (client-side) creates from the manifest in LAC, as the API server stores it after defaulting. */
function createdDeployment(): any {
  return normalize(DEPLOYMENT, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'nginx-deployment', namespace: 'default', labels: { app: 'nginx' }, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': LAC } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'nginx' } },
      template: {
        metadata: { labels: { app: 'nginx' } },
        spec: {
          containers: [
            {
              name: 'nginx',
              image: 'nginx:latest',
              ports: [{ containerPort: 80, protocol: 'TCP' }],
              resources: { limits: { cpu: '500m', memory: '512Mi' }, requests: { cpu: '250m', memory: '256Mi' } },
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
              imagePullPolicy: 'Always',
            },
          ],
          restartPolicy: 'Always',
          terminationGracePeriodSeconds: 30,
          dnsPolicy: 'ClusterFirst',
          securityContext: {},
          schedulerName: 'default-scheduler',
        },
      },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    },
  }).obj;
}

// What Kubernetes recorded for this create (a k3s cluster's answer to GET deployments, verbatim).
const CSA_FIELDS = {
  'f:metadata': {
    'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
    'f:labels': { '.': {}, 'f:app': {} },
  },
  'f:spec': {
    'f:progressDeadlineSeconds': {},
    'f:replicas': {},
    'f:revisionHistoryLimit': {},
    'f:selector': {},
    'f:strategy': { 'f:rollingUpdate': { '.': {}, 'f:maxSurge': {}, 'f:maxUnavailable': {} }, 'f:type': {} },
    'f:template': {
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
      'f:spec': {
        'f:containers': {
          'k:{"name":"nginx"}': {
            '.': {},
            'f:image': {},
            'f:imagePullPolicy': {},
            'f:name': {},
            'f:ports': { '.': {}, 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} } },
            'f:resources': { '.': {}, 'f:limits': { '.': {}, 'f:cpu': {}, 'f:memory': {} }, 'f:requests': { '.': {}, 'f:cpu': {}, 'f:memory': {} } },
            'f:terminationMessagePath': {},
            'f:terminationMessagePolicy': {},
          },
        },
        'f:dnsPolicy': {},
        'f:restartPolicy': {},
        'f:schedulerName': {},
        'f:securityContext': {},
        'f:terminationGracePeriodSeconds': {},
      },
    },
  },
};

const STATUS_FIELDS = {
  'f:metadata': { 'f:annotations': { 'f:deployment.kubernetes.io/revision': {} } },
  'f:status': {
    'f:availableReplicas': {},
    'f:conditions': {
      '.': {},
      'k:{"type":"Available"}': { '.': {}, 'f:lastTransitionTime': {}, 'f:lastUpdateTime': {}, 'f:message': {}, 'f:reason': {}, 'f:status': {}, 'f:type': {} },
      'k:{"type":"Progressing"}': { '.': {}, 'f:lastTransitionTime': {}, 'f:lastUpdateTime': {}, 'f:message': {}, 'f:reason': {}, 'f:status': {}, 'f:type': {} },
    },
    'f:observedGeneration': {},
    'f:readyReplicas': {},
    'f:replicas': {},
    'f:terminatingReplicas': {},
    'f:updatedReplicas': {},
  },
};

function stored(obj: any, rv: string): any {
  const o = structuredClone(obj);
  o.metadata.uid ??= '8ed8a225-b538-4d27-adc2-fa6c9bf6baeb';
  o.metadata.creationTimestamp ??= T0;
  o.metadata.resourceVersion = rv;
  return o;
}

test('create: the fields of a client-side applied Deployment, as Kubernetes records them', () => {
  const obj = createdDeployment();
  const out = trackUpdate(undefined, obj, DEPLOYMENT, { manager: 'kubectl-client-side-apply', apiVersion: 'apps/v1', time: T0, resetFields: [['status']] });
  assert.deepEqual(out.metadata.managedFields, [
    { manager: 'kubectl-client-side-apply', operation: 'Update', apiVersion: 'apps/v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: CSA_FIELDS },
  ]);
  // key order of the fieldsV1 document is Kubernetes' order too
  assert.equal(JSON.stringify(out.metadata.managedFields[0].fieldsV1), JSON.stringify(CSA_FIELDS));
  assert.equal(obj.metadata.managedFields, undefined, 'the argument is not modified');
});

test('status subresource: the controller owns status (and the annotation it wrote), with subresource status', () => {
  const live = stored(trackUpdate(undefined, createdDeployment(), DEPLOYMENT, { manager: 'kubectl-client-side-apply', apiVersion: 'apps/v1', time: T0, resetFields: [['status']] }), '10');
  const next = structuredClone(live);
  next.metadata.annotations['deployment.kubernetes.io/revision'] = '1';
  next.metadata.managedFields = []; // ignored on a subresource
  next.status = {
    observedGeneration: 1,
    replicas: 2,
    updatedReplicas: 2,
    readyReplicas: 2,
    availableReplicas: 2,
    terminatingReplicas: 0,
    conditions: [
      { type: 'Available', status: 'True', lastUpdateTime: T1, lastTransitionTime: T1, reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' },
      { type: 'Progressing', status: 'True', lastUpdateTime: T1, lastTransitionTime: T0, reason: 'NewReplicaSetAvailable', message: 'ReplicaSet "nginx-deployment-6f888c676c" has successfully progressed.' },
    ],
  };
  next.spec.replicas = 5; // the status strategy resets spec: not recorded
  const out = trackUpdate(live, next, DEPLOYMENT, { manager: 'k3s', apiVersion: 'apps/v1', subresource: 'status', time: T1, resetFields: [['spec'], ['metadata', 'labels']] });
  assert.equal(
    JSON.stringify(out.metadata.managedFields),
    JSON.stringify([
      { manager: 'kubectl-client-side-apply', operation: 'Update', apiVersion: 'apps/v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: CSA_FIELDS },
      { manager: 'k3s', operation: 'Update', apiVersion: 'apps/v1', time: T1, fieldsType: 'FieldsV1', fieldsV1: STATUS_FIELDS, subresource: 'status' },
    ]),
  );
});

test('a change moves the field to the writer; the old owner keeps the rest', () => {
  const live = stored(trackUpdate(undefined, createdDeployment(), DEPLOYMENT, { manager: 'kubectl-client-side-apply', apiVersion: 'apps/v1', time: T0 }), '10');
  const next = structuredClone(live);
  next.spec.replicas = 3;
  next.spec.template.spec.containers[0].image = 'nginx:1.27';
  const out = trackUpdate(live, next, DEPLOYMENT, { manager: 'kubectl-edit', apiVersion: 'apps/v1', time: T1 });
  const [csa, edit] = out.metadata.managedFields;
  assert.equal(csa.manager, 'kubectl-client-side-apply');
  assert.equal(csa.time, T0, 'the old owner keeps its time');
  assert.equal(csa.fieldsV1['f:spec']['f:replicas'], undefined);
  assert.equal(csa.fieldsV1['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"nginx"}']['f:image'], undefined);
  assert.ok(csa.fieldsV1['f:spec']['f:revisionHistoryLimit']);
  assert.deepEqual(edit, {
    manager: 'kubectl-edit',
    operation: 'Update',
    apiVersion: 'apps/v1',
    time: T1,
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'f:replicas': {}, 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { 'f:image': {} } } } } } },
  });
});

function cm(data: Record<string, string>, extra: Record<string, unknown> = {}): any {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default', ...extra }, data };
}

function created(data: Record<string, string>, manager = 'kubectl-create'): any {
  return stored(trackUpdate(undefined, cm(data), CONFIGMAP, { manager, apiVersion: 'v1', time: T0 }), '1');
}

test('updates by one manager merge into its one entry; the time moves only when a field changes', () => {
  const live = created({ a: '1' });
  const step1 = stored(trackUpdate(live, cm({ a: '1', b: '2' }, { uid: live.metadata.uid }), CONFIGMAP, { manager: 'kubectl-patch', apiVersion: 'v1', time: T1 }), '2');
  const step2 = stored(trackUpdate(step1, { ...structuredClone(step1), data: { a: '1', b: '2', c: '3' } }, CONFIGMAP, { manager: 'kubectl-patch', apiVersion: 'v1', time: T2 }), '3');
  assert.deepEqual(
    step2.metadata.managedFields.map((e: any) => [e.manager, e.time, e.fieldsV1]),
    [
      ['kubectl-create', T0, { 'f:data': { '.': {}, 'f:a': {} } }],
      ['kubectl-patch', T2, { 'f:data': { 'f:b': {}, 'f:c': {} } }],
    ],
  );
  // a write that changes nothing leaves managedFields exactly as they were (kubectl: "patched (no change)")
  const same = trackUpdate(step2, structuredClone(step2), CONFIGMAP, { manager: 'kubectl-patch', apiVersion: 'v1', time: T3 });
  assert.deepEqual(same, step2);
});

test('removed fields leave every set; an entry left empty goes, and managedFields goes when none is left', () => {
  const live = created({ a: '1' });
  const next = structuredClone(live);
  next.data = { b: '2' };
  const out = stored(trackUpdate(live, next, CONFIGMAP, { manager: 'kubectl-edit', apiVersion: 'v1', time: T1 }), '2');
  assert.deepEqual(
    out.metadata.managedFields.map((e: any) => [e.manager, e.fieldsV1]),
    [
      // data itself stays the creator's (a member without children is written `{}`)
      ['kubectl-create', { 'f:data': {} }],
      ['kubectl-edit', { 'f:data': { 'f:b': {} } }],
    ],
  );
  const next2 = structuredClone(out);
  delete next2.data;
  const gone = trackUpdate(out, next2, CONFIGMAP, { manager: 'kubectl-edit', apiVersion: 'v1', time: T2 });
  assert.equal('managedFields' in gone.metadata, false);
  // an object created without any field anyone sets has no managedFields either
  const bare = trackUpdate(undefined, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'y' } }, CONFIGMAP, { manager: 'm', apiVersion: 'v1', time: T0 });
  assert.equal('managedFields' in bare.metadata, false);
});

test('entries are kept apart by apiVersion and subresource, and sorted as Kubernetes sorts them', () => {
  let live = created({ a: '1' }, 'zeta');
  const write = (mgr: string, data: Record<string, string>, time: string, apiVersion = 'v1', subresource?: string) => {
    const next = structuredClone(live);
    next.data = { ...next.data, ...data };
    live = stored(trackUpdate(live, next, CONFIGMAP, { manager: mgr, apiVersion, time, subresource }), String(Number(live.metadata.resourceVersion) + 1));
  };
  write('alpha', { b: '1' }, T0);
  write('alpha', { c: '1' }, T0, 'v2');
  write('alpha', { d: '1' }, T0, 'v1', 'status');
  write('beta', { e: '1' }, T1);
  assert.deepEqual(
    live.metadata.managedFields.map((e: any) => [e.manager, e.apiVersion, e.subresource ?? '', e.time]),
    [
      ['alpha', 'v1', '', T0],
      ['alpha', 'v1', 'status', T0],
      ['alpha', 'v2', '', T0],
      ['zeta', 'v1', '', T0],
      ['beta', 'v1', '', T1],
    ],
  );
  assert.deepEqual(Object.keys(live.metadata.managedFields[1]), ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1', 'subresource']);
});

test('managedFields sent with an update replace the live ones; [] and [{}] clear them; invalid ones are ignored', () => {
  const live = created({ a: '1' });
  // replaced: the write's own changes are tracked on top of what was sent
  const sent = structuredClone(live);
  sent.metadata.managedFields = [{ manager: 'someone', operation: 'Apply', apiVersion: 'v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } }];
  sent.data.b = '2';
  const out = trackUpdate(live, sent, CONFIGMAP, { manager: 'm', apiVersion: 'v1', time: T1 });
  assert.deepEqual(
    out.metadata.managedFields.map((e: any) => [e.manager, e.operation, e.fieldsV1]),
    [
      ['someone', 'Apply', { 'f:data': { 'f:a': {} } }],
      ['m', 'Update', { 'f:data': { 'f:b': {} } }],
    ],
  );
  // cleared: and the object is then not tracked until its next apply
  for (const reset of [[], [{}]]) {
    const r = structuredClone(live);
    r.metadata.managedFields = reset;
    const cleared = stored(trackUpdate(live, r, CONFIGMAP, { manager: 'm', apiVersion: 'v1', time: T1 }), '2');
    assert.equal('managedFields' in cleared.metadata, false);
    const later = structuredClone(cleared);
    later.data.z = '9';
    assert.equal('managedFields' in trackUpdate(cleared, later, CONFIGMAP, { manager: 'm', apiVersion: 'v1', time: T2 }).metadata, false);
  }
  // invalid (or absent): the live ones stay
  for (const bad of [[{ manager: 'x', operation: 'Bogus', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} }], [{ manager: 'x', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV2' }], undefined]) {
    const b = structuredClone(live);
    b.metadata.managedFields = bad;
    assert.deepEqual(trackUpdate(live, b, CONFIGMAP, { manager: 'm', apiVersion: 'v1', time: T1 }).metadata.managedFields, live.metadata.managedFields);
  }
});

test('the resource ignores status changes of a kind with a status subresource', () => {
  const live = stored(trackUpdate(undefined, createdDeployment(), DEPLOYMENT, { manager: 'a', apiVersion: 'apps/v1', time: T0 }), '1');
  const next = structuredClone(live);
  next.status = { replicas: 4 };
  next.metadata.labels.tier = 'web';
  const out = trackUpdate(live, next, DEPLOYMENT, { manager: 'b', apiVersion: 'apps/v1', time: T1, resetFields: resetFieldsFor('', true) });
  assert.deepEqual(out.metadata.managedFields[1].fieldsV1, { 'f:metadata': { 'f:labels': { 'f:tier': {} } } });
  assert.deepEqual(resetFieldsFor('status', true), [['spec']]);
  assert.deepEqual(resetFieldsFor('', false), []);
});

test('more than ten Update managers: the oldest merge into ancient-changes', () => {
  let live = created({ k0: '0' }, 'm00');
  for (let i = 1; i <= 11; i++) {
    const next = structuredClone(live);
    next.data[`k${i}`] = String(i);
    const time = `2026-08-15T10:${String(10 + i).padStart(2, '0')}:00Z`;
    live = stored(trackUpdate(live, next, CONFIGMAP, { manager: `m${String(i).padStart(2, '0')}`, apiVersion: 'v1', time }), String(i + 1));
  }
  const mf = live.metadata.managedFields;
  assert.equal(mf.length, 10);
  assert.equal(mf[0].manager, 'ancient-changes');
  assert.equal(mf[0].time, '2026-08-15T10:12:00Z');
  assert.deepEqual(mf[0].fieldsV1, { 'f:data': { '.': {}, 'f:k0': {}, 'f:k1': {}, 'f:k2': {} } });
  assert.deepEqual(
    mf.slice(1).map((e: any) => e.manager),
    ['m03', 'm04', 'm05', 'm06', 'm07', 'm08', 'm09', 'm10', 'm11'],
  );
});

test('default field manager from the User-Agent', () => {
  const table: [string | undefined, string][] = [
    ['kubectl/v1.33.1 (linux/amd64) kubernetes/8adc0f0', 'kubectl'],
    ['kubectl.1.33/v1.33.1 (linux/amd64) kubernetes/8adc0f0', 'kubectl.1.33'],
    ['kube-controller-manager/v1.33.1 (linux/amd64) kubernetes/8adc0f0/system:serviceaccount:kube-system:deployment-controller', 'kube-controller-manager'],
    ['Go-http-client/1.1', 'Go-http-client'],
    ['curl', 'curl'],
    ['', ''],
    [undefined, ''],
    ['a\u0007b\tc/x', 'abc'],
    ['x'.repeat(200), 'x'.repeat(128)],
    ['é'.repeat(100), 'é'.repeat(64)],
  ];
  for (const [ua, want] of table) assert.equal(defaultFieldManager(ua), want, String(ua));
  assert.equal(managerOrUserAgent('mine', 'kubectl/v1'), 'mine');
  assert.equal(managerOrUserAgent('', 'kubectl/v1'), 'kubectl');
  assert.equal(managerOrUserAgent(undefined, 'kubectl/v1'), 'kubectl');
  assert.deepEqual(validateFieldManager('ok'), []);
  assert.deepEqual(
    validateFieldManager('a\u0007').map((e) => e.toString()),
    ['fieldManager: Invalid value: "a\\u0007": invalid character U+0007 (at position 1)'],
  );
  assert.deepEqual(
    validateFieldManager('x'.repeat(129)).map((e) => e.toString()),
    ['fieldManager: Too long: may not be more than 128 bytes'],
  );
});

test("an update of fields its manager owns already keeps the manager's fieldsV1 document (shared, not rebuilt)", () => {
  const info = { manager: 'kubectl-patch', apiVersion: 'v1' };
  const live = created({ a: '1' });
  const withUID = (data: Record<string, string>) => cm(data, { uid: live.metadata.uid, creationTimestamp: T0 });
  const step1 = trackUpdate(live, withUID({ a: '1', b: '2' }), CONFIGMAP, { ...info, time: T1 });
  // the server keeps the object as written: the next update starts from it, documents and all
  const step2 = trackUpdate(step1, { ...withUID({ a: '1', b: '3' }), metadata: { ...step1.metadata } }, CONFIGMAP, { ...info, time: T2 });
  const doc = (o: any) => o.metadata.managedFields.find((e: any) => e.manager === 'kubectl-patch').fieldsV1;
  assert.deepEqual(doc(step2), { 'f:data': { 'f:b': {} } });
  assert.equal(doc(step2), doc(step1));
  // a new field makes a new document
  const step3 = trackUpdate(step2, { ...withUID({ a: '1', b: '3', c: '4' }), metadata: { ...step2.metadata } }, CONFIGMAP, { ...info, time: T3 });
  assert.deepEqual(doc(step3), { 'f:data': { 'f:b': {}, 'f:c': {} } });
  assert.notEqual(doc(step3), doc(step2));
});
