// The sequences kubectl runs against the API server: client-side apply, `apply --server-side`
// over it (the last-applied annotation lets kubectl take the fields it set), the managedFields
// JSON patch that migrates the client-side apply entry, and the server-side apply after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apply, trackUpdate, ApplyConflictError, FieldSet } from '../../src/patch/ssa/index.js';
import { normalize } from '../../src/codec/json.js';

const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment';
const CONFIGMAP = 'io.k8s.api.core.v1.ConfigMap';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const T = (m: number) => `2026-08-15T10:${String(m).padStart(2, '0')}:00Z`;

/** The manifest of `kubectl apply -f`. */
const MANIFEST = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { labels: { app: 'nginx' }, name: 'nginx-deployment', namespace: 'default' },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'nginx' } },
    template: {
      metadata: { labels: { app: 'nginx' } },
      spec: {
        containers: [
          {
            image: 'nginx:latest',
            name: 'nginx',
            ports: [{ containerPort: 80 }],
            resources: { limits: { cpu: '500m', memory: '512Mi' }, requests: { cpu: '250m', memory: '256Mi' } },
          },
        ],
      },
    },
  },
};

/** The API server's defaulting of this Deployment (what decode adds before the write is tracked). */
function defaulted(obj: any): any {
  const o = structuredClone(obj);
  const s = o.spec;
  s.strategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } };
  s.revisionHistoryLimit ??= 10;
  s.progressDeadlineSeconds ??= 600;
  const p = s.template.spec;
  p.restartPolicy ??= 'Always';
  p.terminationGracePeriodSeconds ??= 30;
  p.dnsPolicy ??= 'ClusterFirst';
  p.securityContext ??= {};
  p.schedulerName ??= 'default-scheduler';
  for (const c of p.containers) {
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
    c.imagePullPolicy ??= 'Always';
    for (const port of c.ports ?? []) port.protocol ??= 'TCP';
  }
  return normalize(DEPLOYMENT, o).obj;
}

function stored(obj: any, prev?: any): any {
  const o = structuredClone(obj);
  o.metadata.uid = 'u-1';
  o.metadata.creationTimestamp = T(0);
  o.metadata.resourceVersion = String(Number(prev?.metadata?.resourceVersion ?? 0) + 1);
  return o;
}

/** `kubectl apply` (client-side) creating the object: POST with the last-applied annotation. */
function clientSideCreate(manifest: any): any {
  const body = structuredClone(manifest);
  const lac = structuredClone(manifest);
  lac.metadata.annotations = {};
  body.metadata.annotations = { [LAST_APPLIED]: JSON.stringify(lac) + '\n' };
  return stored(trackUpdate(undefined, defaulted(body), DEPLOYMENT, { manager: 'kubectl-client-side-apply', apiVersion: 'apps/v1', time: T(0), resetFields: [['status']] }));
}

/** The server-side apply PATCH: apply, then the server's defaulting and its write. */
function serverSideApply(live: any, manifest: any, time: string, manager = 'kubectl'): any {
  const out = apply(live, structuredClone(manifest), DEPLOYMENT, { manager, apiVersion: 'apps/v1', force: false, time, resetFields: [['status']] });
  return out === live ? live : stored(defaulted(out), live);
}

/** kubectl's csaupgrade.UpgradeManagedFieldsPatch, for the managers kubectl upgrades. */
function upgradePatch(obj: any): any[] | undefined {
  const entries: any[] = structuredClone(obj.metadata.managedFields ?? []);
  let i = entries.findIndex((e) => e.manager === 'kubectl' && e.operation === 'Apply' && !e.subresource);
  if (i < 0) {
    i = entries.findIndex((e) => e.manager === 'kubectl-client-side-apply' && e.operation === 'Update' && !e.subresource);
    if (i < 0) return undefined;
    entries[i].operation = 'Apply';
    entries[i].manager = 'kubectl';
  }
  const csa = entries.find((e) => e.manager === 'kubectl-client-side-apply' && e.operation === 'Update' && !e.subresource && e.apiVersion === entries[i].apiVersion);
  if (csa) entries[i].fieldsV1 = FieldSet.fromFieldsV1(entries[i].fieldsV1).union(FieldSet.fromFieldsV1(csa.fieldsV1)).toFieldsV1();
  const filtered = entries.filter((e) => !(e.manager === 'kubectl-client-side-apply' && e.operation === 'Update' && !e.subresource));
  if (JSON.stringify(filtered) === JSON.stringify(obj.metadata.managedFields)) return undefined;
  return [
    { op: 'replace', path: '/metadata/managedFields', value: filtered },
    { op: 'replace', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion },
  ];
}

const SSA_FIELDS = {
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
            'f:image': {},
            'f:name': {},
            'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
            'f:resources': { 'f:limits': { 'f:cpu': {}, 'f:memory': {} }, 'f:requests': { 'f:cpu': {}, 'f:memory': {} } },
          },
        },
      },
    },
  },
};

test('client-side apply, then apply --server-side, the migration patch, and apply --server-side again', () => {
  const csa = clientSideCreate(MANIFEST);
  assert.deepEqual(
    csa.metadata.managedFields.map((e: any) => [e.manager, e.operation]),
    [['kubectl-client-side-apply', 'Update']],
  );

  // 1. PATCH apply-patch+yaml: the same values: no conflict, kubectl shares the fields
  const ssa1 = serverSideApply(csa, MANIFEST, T(1));
  assert.deepEqual(
    ssa1.metadata.managedFields.map((e: any) => [e.manager, e.operation, e.time]),
    [
      // the merge changed nothing, so (as in Kubernetes) the new Apply entry gets no time
      ['kubectl', 'Apply', undefined],
      ['kubectl-client-side-apply', 'Update', T(0)],
    ],
  );
  assert.deepEqual(ssa1.metadata.managedFields[0].fieldsV1, SSA_FIELDS);
  // kubectl's server-side apply keeps the annotation in step with what it applied (Go's JSON: sorted keys)
  assert.equal(
    ssa1.metadata.annotations[LAST_APPLIED],
    '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"app":"nginx"},"name":"nginx-deployment","namespace":"default"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"image":"nginx:latest","name":"nginx","ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"500m","memory":"512Mi"},"requests":{"cpu":"250m","memory":"256Mi"}}}]}}}}\n',
  );

  // 2. kubectl sees the kubectl-client-side-apply entry and sends the JSON patch of managedFields
  const patch = upgradePatch(ssa1)!;
  assert.ok(patch);
  const patched = structuredClone(ssa1);
  patched.metadata.managedFields = patch[0].value;
  patched.metadata.resourceVersion = patch[1].value;
  const migrated = stored(trackUpdate(ssa1, patched, DEPLOYMENT, { manager: 'kubectl', apiVersion: 'apps/v1', time: T(2), resetFields: [['status']] }), ssa1);
  assert.deepEqual(migrated.metadata.managedFields, patch[0].value, 'the managed fields are what kubectl sent');
  assert.equal(upgradePatch(migrated), undefined, 'nothing left to migrate');

  // 3. the same apply again: kubectl now owns what client-side apply set; what it does not apply
  // any more (the annotation, the defaulted fields) is removed, and defaulting puts the defaults back
  const out = apply(migrated, structuredClone(MANIFEST), DEPLOYMENT, { manager: 'kubectl', apiVersion: 'apps/v1', force: false, time: T(3), resetFields: [['status']] });
  assert.equal(out.metadata.annotations, undefined);
  assert.equal(out.spec.revisionHistoryLimit, undefined);
  assert.equal(out.spec.template.spec.containers[0].imagePullPolicy, undefined);
  assert.deepEqual(out.metadata.managedFields, [{ manager: 'kubectl', operation: 'Apply', apiVersion: 'apps/v1', time: T(3), fieldsType: 'FieldsV1', fieldsV1: SSA_FIELDS }]);
  const ssa3 = stored(defaulted(out), migrated);
  assert.equal(ssa3.spec.revisionHistoryLimit, 10);
  assert.equal(upgradePatch(ssa3), undefined);

  // 4. and once more: nothing changes
  assert.equal(serverSideApply(ssa3, MANIFEST, T(4)), ssa3);
});

test('apply --server-side may take the fields its client-side apply set (and that still hold their value)', () => {
  const csa = clientSideCreate(MANIFEST);
  const scaled = structuredClone(MANIFEST);
  scaled.spec.replicas = 4;
  // another manager conflicts with client-side apply's replicas
  assert.throws(
    () => serverSideApply(csa, scaled, T(1), 'helm'),
    (e: unknown) => e instanceof ApplyConflictError && e.message === 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas',
  );
  // kubectl does not: the last-applied annotation says it set replicas
  const out = serverSideApply(csa, scaled, T(1));
  assert.equal(out.spec.replicas, 4);
  const [kubectl, clientSide] = out.metadata.managedFields;
  assert.equal(kubectl.manager, 'kubectl');
  assert.equal(kubectl.time, T(1));
  assert.ok(kubectl.fieldsV1['f:spec']['f:replicas']);
  assert.equal(clientSide.fieldsV1['f:spec']['f:replicas'], undefined);

  // a value changed since by someone else is theirs: kubectl conflicts with them
  const edited = stored(
    trackUpdate(
      csa,
      (() => {
        const n = structuredClone(csa);
        n.spec.replicas = 5;
        return n;
      })(),
      DEPLOYMENT,
      { manager: 'kubectl-edit', apiVersion: 'apps/v1', time: T(1) },
    ),
    csa,
  );
  assert.throws(
    () => serverSideApply(edited, scaled, T(2)),
    (e: unknown) => e instanceof ApplyConflictError && e.message === 'Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.replicas',
  );
});

test('kubectl patch: a patch that changes nothing returns managedFields untouched (`patched (no change)`)', () => {
  const live = stored(trackUpdate(undefined, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: '1' } }, CONFIGMAP, { manager: 'kubectl-create', apiVersion: 'v1', time: T(0) }));
  const same = trackUpdate(live, structuredClone(live), CONFIGMAP, { manager: 'kubectl-patch', apiVersion: 'v1', time: T(5) });
  assert.deepEqual(same, live);
  const changed = trackUpdate(live, { ...structuredClone(live), data: { a: '2' } }, CONFIGMAP, { manager: 'kubectl-patch', apiVersion: 'v1', time: T(5) });
  assert.deepEqual(
    changed.metadata.managedFields.map((e: any) => [e.manager, e.time, e.fieldsV1]),
    [
      ['kubectl-create', T(0), { 'f:data': {} }],
      ['kubectl-patch', T(5), { 'f:data': { 'f:a': {} } }],
    ],
  );
});

test('create through apply and --dry-run=server are the same computation', () => {
  const cfg = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' }, data: { a: '1' } };
  const a = apply(undefined, cfg, CONFIGMAP, { manager: 'kubectl', apiVersion: 'v1', force: false, time: T(1) });
  const b = apply(undefined, cfg, CONFIGMAP, { manager: 'kubectl', apiVersion: 'v1', force: false, time: T(1) });
  assert.deepEqual(a, b);
  assert.deepEqual(a.metadata.managedFields, [{ manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', time: T(1), fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } }]);
  assert.deepEqual(a.data, { a: '1' });
});
