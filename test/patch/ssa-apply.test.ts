// apply: server-side apply of configurations, ownership, conflicts, pruning, list and map kinds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apply, trackUpdate, ApplyConflictError, type ApplyOptions } from '../../src/patch/ssa/index.js';
import { StatusError } from '../../src/machinery/errors.js';

const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment';
const CONFIGMAP = 'io.k8s.api.core.v1.ConfigMap';
const POD = 'io.k8s.api.core.v1.Pod';
const SERVICE = 'io.k8s.api.core.v1.Service';

let clock = 0;
/** A new time for each write: 2024-09-03T14:00:00Z, then a minute later, and so on. */
function tick(): string {
  const d = new Date(Date.UTC(2024, 8, 3, 14, clock++, 0));
  return d.toISOString().replace('.000Z', 'Z');
}

/** What the server does around apply: stores the result with an identity and a new resourceVersion. */
function store(obj: any, prev?: any): any {
  const o = structuredClone(obj);
  o.metadata.uid = prev?.metadata?.uid ?? 'c8e67d4e-72a8-4555-acd9-9c2c41081f4c';
  o.metadata.creationTimestamp = prev?.metadata?.creationTimestamp ?? '2024-09-03T14:00:00Z';
  o.metadata.resourceVersion = String(Number(prev?.metadata?.resourceVersion ?? 0) + 1);
  return o;
}

function applyAs(live: any, cfg: any, type: string, manager: string, more: Partial<ApplyOptions> = {}): any {
  const apiVersion = cfg.apiVersion;
  const out = apply(live, cfg, type, { manager, apiVersion, force: false, time: tick(), ...more });
  return out === live ? live : store(out, live);
}

function updateAs(live: any, mutate: (o: any) => void, type: string, manager: string, more: { subresource?: string; apiVersion?: string } = {}): any {
  const next = structuredClone(live);
  mutate(next);
  return store(trackUpdate(live, next, type, { manager, apiVersion: more.apiVersion ?? live.apiVersion, subresource: more.subresource, time: tick() }), live);
}

function fields(obj: any, manager: string, operation = 'Apply'): any {
  return obj.metadata.managedFields?.find((e: any) => e.manager === manager && e.operation === operation)?.fieldsV1;
}

function managers(obj: any): string[] {
  return (obj.metadata.managedFields ?? []).map((e: any) => `${e.manager}/${e.operation}${e.subresource ? '/' + e.subresource : ''}`);
}

function conflictOf(fn: () => unknown): ApplyConflictError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ApplyConflictError, `expected an ApplyConflictError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected a conflict');
}

const cm = (data: Record<string, string>, meta: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default', ...meta }, data });

// A Deployment applied by a controller, and the fields Kubernetes recorded for it (from a real
// cluster's object; the manager name is the one that cluster had).
const NGINX = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'nginx-deployment', namespace: 'default', labels: { app: 'nginx' } },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'nginx' } },
    template: {
      metadata: { labels: { app: 'nginx' } },
      spec: {
        containers: [
          {
            name: 'nginx',
            image: 'nginx:1.14.2',
            ports: [{ containerPort: 80 }],
            env: [{ name: 'MY_NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
          },
        ],
      },
    },
  },
};
const NGINX_FIELDS = {
  'f:metadata': { 'f:labels': { 'f:app': {} } },
  'f:spec': {
    'f:replicas': {},
    'f:selector': {},
    'f:template': {
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': {
        'f:containers': {
          'k:{"name":"nginx"}': {
            '.': {},
            'f:env': { 'k:{"name":"MY_NODE_NAME"}': { '.': {}, 'f:name': {}, 'f:valueFrom': { 'f:fieldRef': {} } } },
            'f:image': {},
            'f:name': {},
            'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
          },
        },
      },
    },
  },
};

test('apply creates: the applier owns what it applied, in Kubernetes fieldsV1', () => {
  const out = apply(undefined, NGINX, DEPLOYMENT, { manager: 'provider-kubernetes/sample-deployment-owner', apiVersion: 'apps/v1', force: false, time: '2024-09-03T14:09:23Z' });
  assert.deepEqual(out.metadata.managedFields, [
    { manager: 'provider-kubernetes/sample-deployment-owner', operation: 'Apply', apiVersion: 'apps/v1', time: '2024-09-03T14:09:23Z', fieldsType: 'FieldsV1', fieldsV1: NGINX_FIELDS },
  ]);
  assert.equal(JSON.stringify(out.metadata.managedFields[0].fieldsV1), JSON.stringify(NGINX_FIELDS));
  assert.equal(out.spec.replicas, 3);
  assert.deepEqual(out.spec.template.spec.containers, NGINX.spec.template.spec.containers);
  assert.equal(out.metadata.name, 'nginx-deployment');
  // the argument is untouched and the result shares nothing with it
  assert.equal((NGINX.metadata as any).managedFields, undefined);
  out.spec.template.spec.containers[0].image = 'changed';
  assert.equal(NGINX.spec.template.spec.containers[0]!.image, 'nginx:1.14.2');
});

test('applying the same configuration again changes nothing: the live object itself comes back', () => {
  const live = store(apply(undefined, NGINX, DEPLOYMENT, { manager: 'kubectl', apiVersion: 'apps/v1', force: false, time: '2024-09-03T14:09:23Z' }));
  const again = apply(live, structuredClone(NGINX), DEPLOYMENT, { manager: 'kubectl', apiVersion: 'apps/v1', force: false, time: '2024-09-03T15:00:00Z' });
  assert.equal(again, live);
  assert.equal(again.metadata.managedFields[0].time, '2024-09-03T14:09:23Z');
  // also once defaults and status are in the stored object
  const defaulted = structuredClone(live);
  defaulted.spec.template.spec.containers[0].imagePullPolicy = 'IfNotPresent';
  defaulted.spec.template.spec.containers[0].ports[0].protocol = 'TCP';
  defaulted.status = { replicas: 3 };
  assert.equal(apply(defaulted, NGINX, DEPLOYMENT, { manager: 'kubectl', apiVersion: 'apps/v1', force: false, time: '2024-09-03T15:00:00Z' }), defaulted);
});

test('conflict with an Update manager: message, causes, code', () => {
  const live = updateAs(store(trackUpdate(undefined, cm({ a: '1' }), CONFIGMAP, { manager: 'kubectl-client-side-apply', apiVersion: 'v1', time: tick() })), () => {}, CONFIGMAP, 'x');
  const e = conflictOf(() => apply(live, cm({ a: '2' }), CONFIGMAP, { manager: 'kubectl', apiVersion: 'v1', force: false }));
  assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.a');
  assert.equal(e.code, 409);
  assert.equal(e.reason, 'Conflict');
  assert.deepEqual(e.toStatus(), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.a',
    reason: 'Conflict',
    details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl-client-side-apply" using v1', field: '.data.a' }] },
    code: 409,
  });
  assert.deepEqual(e.conflicts, [{ manager: 'kubectl-client-side-apply', operation: 'Update', apiVersion: 'v1', field: '.data.a' }]);
  assert.ok(e instanceof StatusError);
});

test('conflicts with several managers: grouped by manager, appliers named without version, subresources named', () => {
  let live = applyAs(undefined, cm({ a: '1', b: '1' }), CONFIGMAP, 'applier-one');
  live = updateAs(live, (o) => (o.data.c = '1'), CONFIGMAP, 'editor');
  live = updateAs(live, (o) => (o.data.d = '1'), CONFIGMAP, 'ctrl', { subresource: 'status' });
  const e = conflictOf(() => apply(live, cm({ a: '2', b: '2', c: '2', d: '2' }), CONFIGMAP, { manager: 'other', apiVersion: 'v1', force: false }));
  assert.equal(
    e.message,
    'Apply failed with 4 conflicts: conflicts with "applier-one":\n- .data.a\n- .data.b\nconflicts with "ctrl" with subresource "status" using v1:\n- .data.d\nconflicts with "editor" using v1:\n- .data.c',
  );
  assert.deepEqual(
    e.toStatus().details!.causes,
    [
      { reason: 'FieldManagerConflict', message: 'conflict with "applier-one"', field: '.data.a' },
      { reason: 'FieldManagerConflict', message: 'conflict with "applier-one"', field: '.data.b' },
      { reason: 'FieldManagerConflict', message: 'conflict with "ctrl" with subresource "status" using v1', field: '.data.d' },
      { reason: 'FieldManagerConflict', message: 'conflict with "editor" using v1', field: '.data.c' },
    ],
  );
  // a conflicting list item field is named by its key
  const dep = applyAs(undefined, NGINX, DEPLOYMENT, 'owner');
  const changed = structuredClone(NGINX);
  changed.spec.template.spec.containers[0]!.image = 'nginx:2';
  changed.spec.replicas = 1;
  const e2 = conflictOf(() => apply(dep, changed, DEPLOYMENT, { manager: 'other', apiVersion: 'apps/v1', force: false }));
  assert.equal(e2.message, 'Apply failed with 2 conflicts: conflicts with "owner":\n- .spec.replicas\n- .spec.template.spec.containers[name="nginx"].image');
});

test('force takes the fields: the other manager loses them', () => {
  let live = applyAs(undefined, cm({ a: '1', b: '1' }), CONFIGMAP, 'one');
  live = applyAs(live, cm({ a: '2' }), CONFIGMAP, 'two', { force: true });
  assert.deepEqual(live.data, { a: '2', b: '1' });
  assert.deepEqual(fields(live, 'one'), { 'f:data': { 'f:b': {} } });
  assert.deepEqual(fields(live, 'two'), { 'f:data': { 'f:a': {} } });
  // force against an Update manager
  live = updateAs(live, (o) => (o.data.b = 'edited'), CONFIGMAP, 'editor');
  assert.deepEqual(fields(live, 'one'), undefined, 'an entry left without fields goes');
  live = applyAs(live, cm({ a: '2', b: 'forced' }), CONFIGMAP, 'two', { force: true });
  assert.deepEqual(managers(live), ['two/Apply']);
});

test('the same value is no conflict: ownership is shared, and a field goes only when its last owner stops applying it', () => {
  let live = applyAs(undefined, cm({ a: '1', b: '1' }), CONFIGMAP, 'one');
  live = applyAs(live, cm({ a: '1', c: '1' }), CONFIGMAP, 'two');
  assert.deepEqual(fields(live, 'one'), { 'f:data': { 'f:a': {}, 'f:b': {} } });
  assert.deepEqual(fields(live, 'two'), { 'f:data': { 'f:a': {}, 'f:c': {} } });
  live = applyAs(live, cm({ b: '1' }), CONFIGMAP, 'one'); // one stops applying a: two still owns it
  assert.deepEqual(live.data, { a: '1', b: '1', c: '1' });
  live = applyAs(live, cm({ c: '1' }), CONFIGMAP, 'two'); // now nobody applies a
  assert.deepEqual(live.data, { b: '1', c: '1' });
  assert.deepEqual(fields(live, 'two'), { 'f:data': { 'f:c': {} } });
});

test('a field the applier stops applying is removed, unless an Update manager also owns it', () => {
  let live = applyAs(undefined, cm({ a: '1', b: '1' }, { labels: { x: '1', y: '1' } }), CONFIGMAP, 'kubectl');
  live = applyAs(live, cm({ a: '1' }, { labels: { x: '1' } }), CONFIGMAP, 'kubectl');
  assert.deepEqual(live.data, { a: '1' });
  assert.deepEqual(live.metadata.labels, { x: '1' });
  assert.deepEqual(fields(live, 'kubectl'), { 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:x': {} } } });
  // an editor sets a to the value it has: the editor owns nothing new (nothing changed) ...
  live = updateAs(live, (o) => (o.data.a = '1'), CONFIGMAP, 'editor');
  assert.deepEqual(managers(live), ['kubectl/Apply']);
  // ... but when it changes it, it owns it, and the applier can no longer remove it
  live = updateAs(live, (o) => (o.data.a = '2'), CONFIGMAP, 'editor');
  live = applyAs(live, cm({}), CONFIGMAP, 'kubectl');
  assert.deepEqual(live.data, { a: '2' });
});

test('SMD scenarios: appliers of a map list remove only their own items', () => {
  const pod = (...names: string[]) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: names.map((name) => ({ name })) } });
  const names = (o: any) => o.spec.containers.map((c: any) => c.name).join(',');
  // remove_one
  let live = applyAs(undefined, pod('a', 'b'), POD, 'apply-one');
  live = applyAs(live, pod('c'), POD, 'apply-two');
  live = applyAs(live, pod('a'), POD, 'apply-one');
  assert.equal(names(live), 'a,c');
  assert.deepEqual(fields(live, 'apply-one'), { 'f:spec': { 'f:containers': { 'k:{"name":"a"}': { '.': {}, 'f:name': {} } } } });
  assert.deepEqual(fields(live, 'apply-two'), { 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:name': {} } } } });
  // remove_one_keep_one
  live = applyAs(undefined, pod('a', 'b', 'c'), POD, 'apply-one');
  live = applyAs(live, pod('c', 'd'), POD, 'apply-two');
  live = applyAs(live, pod('a'), POD, 'apply-one');
  assert.equal(names(live), 'a,c,d');
  // change_value_yes_conflict
  const withImage = (image: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image }] } });
  live = applyAs(undefined, withImage('0'), POD, 'apply-one');
  assert.equal(applyAs(live, withImage('0'), POD, 'apply-two').metadata.managedFields.length, 2); // same_value_no_conflict
  const e = conflictOf(() => applyAs(live, withImage('1'), POD, 'apply-two'));
  assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "apply-one": .spec.containers[name="a"].image');
});

test('container ports: keyed by containerPort and protocol (TCP when left out)', () => {
  const pod = (ports: object[]) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'dns', image: 'coredns', ports }] } });
  let live = applyAs(undefined, pod([{ containerPort: 53 }, { containerPort: 53, protocol: 'UDP', name: 'dns' }]), POD, 'one');
  assert.deepEqual(fields(live, 'one')['f:spec']['f:containers']['k:{"name":"dns"}']['f:ports'], {
    'k:{"containerPort":53,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} },
    'k:{"containerPort":53,"protocol":"UDP"}': { '.': {}, 'f:containerPort': {}, 'f:name': {}, 'f:protocol': {} },
  });
  // the stored object has the default written out: the same item for the applier
  live.spec.containers[0].ports[0].protocol = 'TCP';
  live = applyAs(live, pod([{ containerPort: 53, protocol: 'UDP', name: 'dns' }]), POD, 'one');
  assert.deepEqual(live.spec.containers[0].ports, [{ containerPort: 53, protocol: 'UDP', name: 'dns' }]);
});

test('finalizers are a set: appliers add their own values and remove only those', () => {
  const fin = (...f: string[]) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default', finalizers: f } });
  let live = applyAs(undefined, fin('example.com/a', 'example.com/b'), CONFIGMAP, 'one');
  live = applyAs(live, fin('example.com/b', 'example.com/c'), CONFIGMAP, 'two');
  assert.deepEqual(live.metadata.finalizers, ['example.com/a', 'example.com/b', 'example.com/c']);
  assert.deepEqual(fields(live, 'two'), { 'f:metadata': { 'f:finalizers': { 'v:"example.com/b"': {}, 'v:"example.com/c"': {} } } });
  live = applyAs(live, fin(), CONFIGMAP, 'one');
  assert.deepEqual(live.metadata.finalizers, ['example.com/b', 'example.com/c']);
  live = applyAs(live, fin('example.com/c'), CONFIGMAP, 'two');
  assert.deepEqual(live.metadata.finalizers, ['example.com/c']);
});

test('Service ports: keyed by port and protocol', () => {
  const svc = (ports: object[]) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { selector: { app: 'a' }, ports } });
  let live = applyAs(undefined, svc([{ name: 'http', port: 80, targetPort: 8080 }]), SERVICE, 'kubectl');
  assert.deepEqual(fields(live, 'kubectl'), {
    'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {}, 'f:targetPort': {} } }, 'f:selector': {} },
  });
  live = applyAs(live, svc([{ name: 'dns', port: 53, protocol: 'UDP' }]), SERVICE, 'other');
  assert.deepEqual(
    live.spec.ports.map((p: any) => p.name),
    ['http', 'dns'],
  );
  const e = conflictOf(() => applyAs(live, svc([{ name: 'web', port: 80, targetPort: 8080 }]), SERVICE, 'other'));
  assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "kubectl": .spec.ports[port=80,protocol="TCP"].name');
});

test('tolerations are atomic: replaced whole, owned as one field', () => {
  const pod = (tolerations: object[]) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c' }], tolerations } });
  let live = applyAs(undefined, pod([{ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'Exists' }]), POD, 'one');
  assert.deepEqual(fields(live, 'one')['f:spec']['f:tolerations'], {});
  const e = conflictOf(() => applyAs(live, pod([{ key: 'c', operator: 'Exists' }]), POD, 'two'));
  assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "one": .spec.tolerations');
  live = applyAs(live, pod([{ key: 'c', operator: 'Exists' }]), POD, 'two', { force: true });
  assert.deepEqual(live.spec.tolerations, [{ key: 'c', operator: 'Exists' }]);
});

test('maps: labels merge by key across appliers; an atomic map (nodeSelector) is replaced whole', () => {
  const pod = (labels: Record<string, string>, nodeSelector: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', labels },
    spec: { containers: [{ name: 'c' }], nodeSelector },
  });
  let live = applyAs(undefined, pod({ a: '1' }, { disk: 'ssd', zone: 'z1' }), POD, 'one');
  live = applyAs(live, pod({ b: '1' }, { disk: 'ssd', zone: 'z1' }), POD, 'two');
  assert.deepEqual(live.metadata.labels, { a: '1', b: '1' });
  assert.deepEqual(fields(live, 'two'), { 'f:metadata': { 'f:labels': { 'f:b': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:name': {} } }, 'f:nodeSelector': {} } });
  live = applyAs(live, pod({ b: '1' }, { disk: 'hdd' }), POD, 'two', { force: true });
  assert.deepEqual(live.spec.nodeSelector, { disk: 'hdd' });
  assert.deepEqual(fields(live, 'one'), { 'f:metadata': { 'f:labels': { 'f:a': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:name': {} } } } });
  // an atomic struct (a Deployment's selector) is one field as well
  const dep = applyAs(undefined, NGINX, DEPLOYMENT, 'one');
  const other = structuredClone(NGINX);
  other.spec.selector = { matchLabels: { app: 'nginx' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] } as any;
  assert.equal(conflictOf(() => applyAs(dep, other, DEPLOYMENT, 'two')).message, 'Apply failed with 1 conflict: conflict with "one": .spec.selector');
});

test('removing a container the applier applied removes it; items keep their order', () => {
  const pod = (...names: string[]) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: names.map((name) => ({ name, image: name })) } });
  let live = applyAs(undefined, pod('a', 'b', 'c'), POD, 'kubectl');
  live = applyAs(live, pod('c', 'a', 'd'), POD, 'kubectl');
  assert.deepEqual(
    live.spec.containers.map((c: any) => c.name),
    ['c', 'a', 'd'],
  );
});

test('status subresource: its applier owns status; the resource appliers keep spec', () => {
  const live0 = applyAs(undefined, NGINX, DEPLOYMENT, 'kubectl', { resetFields: [['status']] });
  const status = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nginx-deployment', namespace: 'default' }, spec: { replicas: 99 }, status: { replicas: 3, readyReplicas: 3 } };
  const out = apply(live0, status, DEPLOYMENT, { manager: 'ctrl', apiVersion: 'apps/v1', subresource: 'status', force: false, time: tick(), resetFields: [['spec']] });
  out.spec = structuredClone(live0.spec); // what the status strategy does with spec
  const live = store(out, live0);
  assert.deepEqual(
    live.metadata.managedFields.map((e: any) => [e.manager, e.operation, e.subresource, e.fieldsV1]),
    [
      ['kubectl', 'Apply', undefined, NGINX_FIELDS],
      ['ctrl', 'Apply', 'status', { 'f:status': { 'f:readyReplicas': {}, 'f:replicas': {} } }],
    ],
  );
  // the main resource cannot take status through apply; the status applier cannot take spec
  const e = conflictOf(() => apply(live, { ...status, status: { replicas: 1 } }, DEPLOYMENT, { manager: 'other', apiVersion: 'apps/v1', subresource: 'status', force: false, resetFields: [['spec']] }));
  assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "ctrl" with subresource "status": .status.replicas');
  const spec = apply(live, NGINX, DEPLOYMENT, { manager: 'kubectl', apiVersion: 'apps/v1', force: false, resetFields: [['status']] });
  assert.equal(spec, live, 'the resource applier re-applying its spec changes nothing');
});

test('an object without managed fields: its fields first go to before-first-apply', () => {
  const live = store(cm({ a: '1', b: '1' }));
  const e = conflictOf(() => apply(live, cm({ a: '2' }), CONFIGMAP, { manager: 'm', apiVersion: 'v1', force: false }));
  assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a');
  const out = applyAs(live, cm({ a: '1' }), CONFIGMAP, 'm');
  assert.deepEqual(
    out.metadata.managedFields.map((x: any) => [x.manager, x.operation, x.fieldsV1]),
    [
      ['m', 'Apply', { 'f:data': { 'f:a': {} } }],
      ['before-first-apply', 'Update', { 'f:data': { '.': {}, 'f:a': {}, 'f:b': {} } }],
    ],
  );
});

test('errors: another kind, managedFields in the configuration, duplicate keys', () => {
  const live = applyAs(undefined, cm({ a: '1' }), CONFIGMAP, 'm');
  const status = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      assert.ok(e instanceof StatusError);
      return [e.code, e.reason, e.message];
    }
    assert.fail('expected an error');
  };
  assert.deepEqual(
    status(() => apply(live, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } }, CONFIGMAP, { manager: 'm', apiVersion: 'v1', force: false })),
    [400, 'BadRequest', 'invalid object type: /v1, Kind=Secret'],
  );
  assert.deepEqual(
    status(() => apply(live, { apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'x' } }, CONFIGMAP, { manager: 'm', apiVersion: 'v1', force: false })),
    [400, 'BadRequest', 'invalid object type: apps/v1, Kind=ConfigMap'],
  );
  assert.deepEqual(
    status(() => apply(live, { ...cm({}), metadata: { name: 'x', managedFields: [] } }, CONFIGMAP, { manager: 'm', apiVersion: 'v1', force: false })),
    [400, 'BadRequest', 'metadata.managedFields must be nil'],
  );
  const dup = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'a' }, { name: 'a' }] } };
  assert.deepEqual(status(() => apply(undefined, dup, POD, { manager: 'm', apiVersion: 'v1', force: false })), [
    400,
    'BadRequest',
    'failed to create typed patch object (default/p; /v1, Kind=Pod): .spec.containers: duplicate entries for key [name="a"]',
  ]);
  // unknown fields and values of the wrong type are rejected as Kubernetes rejects them (it does
  // not prune an applied configuration), in its words, but as the client's error (400, where
  // Kubernetes answers 500)
  assert.deepEqual(status(() => apply(live, { ...cm({ a: '1' }), spec: { x: 1 } }, CONFIGMAP, { manager: 'm', apiVersion: 'v1', force: false })), [
    400,
    'BadRequest',
    'failed to create typed patch object (default/x; /v1, Kind=ConfigMap): .spec: field not declared in schema',
  ]);
  const typed = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: '3', paused: 'yes' } };
  assert.deepEqual(status(() => apply(undefined, typed, DEPLOYMENT, { manager: 'm', apiVersion: 'apps/v1', force: false })), [
    400,
    'BadRequest',
    'failed to create typed patch object (/d; apps/v1, Kind=Deployment): errors:\n  .spec.replicas: expected numeric (int or float), got string\n  .spec.paused: expected boolean, got &{yes}',
  ]);
  const keyless = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ image: 'x' }] } };
  assert.match(status(() => apply(undefined, keyless, POD, { manager: 'm', apiVersion: 'v1', force: false }))[2] as string, /element 0: associative list with keys has an element that omits all key fields \["name"\]/);
});

test('apply on an object with managed fields of other apiVersions and an Update entry of its own', () => {
  let live = applyAs(undefined, NGINX, DEPLOYMENT, 'kubectl');
  live = updateAs(live, (o) => (o.spec.replicas = 5), DEPLOYMENT, 'hpa');
  assert.deepEqual(managers(live), ['kubectl/Apply', 'hpa/Update']);
  const noReplicas = structuredClone(NGINX) as any;
  delete noReplicas.spec.replicas;
  live = applyAs(live, noReplicas, DEPLOYMENT, 'kubectl');
  assert.equal(live.spec.replicas, 5, 'the field stays: hpa owns it');
  assert.equal(fields(live, 'kubectl')['f:spec']['f:replicas'], undefined);
});

test('SMD nested-struct scenarios: what prune removes and what it leaves to other owners', () => {
  // structured-merge-diff's struct_apply_* cases on a Pod's securityContext (name: fsGroupChangePolicy, value: runAsUser)
  const pod = (sc?: unknown) => (sc === undefined ? { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } } : { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { securityContext: sc } });
  const A = (live: any, sc?: unknown) => applyAs(live, pod(sc), POD, 'default');
  const U = (live: any, sc: unknown) => updateAs(live, (o) => (o.spec.securityContext = sc), POD, 'controller');
  const sc = (o: any) => o.spec?.securityContext;

  let o = A(A(undefined, { fsGroupChangePolicy: 'a', runAsUser: 1 }));
  assert.equal(sc(o), undefined, 'remove_all');
  assert.equal(o.metadata.managedFields, undefined);

  o = A(A(undefined, { fsGroupChangePolicy: 'a' }), null);
  assert.equal(sc(o), null, 'remove_dangling');
  assert.deepEqual(fields(o, 'default'), { 'f:spec': { 'f:securityContext': {} } });

  o = A(U(A(undefined, { fsGroupChangePolicy: 'a' }), { fsGroupChangePolicy: 'a', runAsUser: 1 }));
  assert.deepEqual(sc(o), { runAsUser: 1 }, 'apply_update_remove_all');

  o = A(U(A(undefined, { fsGroupChangePolicy: 'a' }), { fsGroupChangePolicy: 'a', runAsUser: 1 }), {});
  assert.deepEqual(sc(o), { runAsUser: 1 }, 'apply_update_dict_dangling');

  o = A(U(A(undefined, { fsGroupChangePolicy: 'a' }), { fsGroupChangePolicy: 'a', runAsUser: 1 }), null);
  assert.deepEqual(sc(o), { runAsUser: 1 }, 'apply_update_dict_null');

  o = A(U(A(undefined, { fsGroupChangePolicy: 'a' }), { fsGroupChangePolicy: 'b', runAsUser: 1 }), null);
  assert.deepEqual(sc(o), { fsGroupChangePolicy: 'b', runAsUser: 1 }, 'apply_update_took_over');
});
