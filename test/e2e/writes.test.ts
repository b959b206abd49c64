// Write semantics over raw HTTP and kubectl: PUT (replace, stale resourceVersion, unconditional,
// create-on-update), metadata.generation of the workload kinds, the status and scale
// subresources, and no-op writes that must not bump resourceVersion or managedFields times.
// Every expectation is what a Kubernetes 1.33 API server answers.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startCluster, expectStatus, type Cluster, type RawResponse } from './harness.js';

let c: Cluster;
const NS = 'default';
const cms = `/api/v1/namespaces/${NS}/configmaps`;
const apps = `/apis/apps/v1/namespaces/${NS}`;

before(async () => {
  // The workload controllers would write the objects these tests read back and race their PUTs
  // (the statefulset controller's status write fell between a GET and a PUT of /scale in a CI run).
  const workload = ['deployment', 'replicaset', 'replicationcontroller', 'statefulset', 'daemonset', 'job', 'cronjob'];
  c = await startCluster({ args: [`--controllers=*,${workload.map((w) => `-${w}-controller`).join(',')}`] });
});

after(async () => {
  await c?.stop();
});

/** a PKCS#10 request for `cn`, base64 as a CertificateSigningRequest's spec.request holds it (made by openssl) */
function csrRequest(cn: string): string {
  const r = spawnSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', '/dev/null', '-subj', `/CN=${cn}`], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl: ${r.stderr}`);
  return Buffer.from(r.stdout).toString('base64');
}

function ok(r: RawResponse, code: number, what: string): any {
  assert.equal(r.status, code, `${what}: ${r.status} ${r.text.slice(0, 800)}`);
  return r.json();
}

async function get(path: string): Promise<any> {
  return ok(await c.raw('GET', path), 200, `GET ${path}`);
}

async function create(collection: string, obj: any): Promise<any> {
  return ok(await c.raw('POST', collection, { body: obj }), 201, `POST ${collection}`);
}

const container = (image = 'nginx:1.27') => ({ name: 'c', image });
const podTemplate = (app: string, restartPolicy?: string) => ({
  metadata: { labels: { app } },
  spec: { containers: [container()], ...(restartPolicy ? { restartPolicy } : {}) },
});

const DEPLOYMENT = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { app: name } },
  spec: { replicas: 2, selector: { matchLabels: { app: name } }, template: podTemplate(name) },
});
const REPLICASET = (name: string) => ({ ...DEPLOYMENT(name), kind: 'ReplicaSet' });
const STATEFULSET = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name, labels: { app: name } },
  spec: { replicas: 2, serviceName: name, selector: { matchLabels: { app: name } }, template: podTemplate(name) },
});
const DAEMONSET = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name, labels: { app: name } },
  spec: { selector: { matchLabels: { app: name } }, template: podTemplate(name) },
});
const JOB = (name: string) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name, labels: { app: name } },
  spec: { parallelism: 1, template: { spec: { containers: [container('busybox:1.36')], restartPolicy: 'Never' } } },
});
const CRONJOB = (name: string) => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name, labels: { app: name } },
  spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { containers: [container('busybox:1.36')], restartPolicy: 'OnFailure' } } } } },
});
const RC = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ReplicationController',
  metadata: { name, labels: { app: name } },
  spec: { replicas: 2, selector: { app: name }, template: podTemplate(name) },
});

describe('PUT', () => {
  test('replaces the whole object: fields left out are gone, identity and creation time stay', async () => {
    const made = await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'put-replace', labels: { l: '1' }, annotations: { a: '1' } }, data: { a: '1', b: '2' } });
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'put-replace', resourceVersion: made.metadata.resourceVersion }, data: { c: '3' } };
    const out = ok(await c.raw('PUT', `${cms}/put-replace`, { body }), 200, 'PUT');
    assert.deepEqual(out.data, { c: '3' });
    assert.equal(out.metadata.labels, undefined);
    assert.equal(out.metadata.annotations, undefined);
    assert.equal(out.metadata.uid, made.metadata.uid);
    assert.equal(out.metadata.creationTimestamp, made.metadata.creationTimestamp);
    assert.notEqual(out.metadata.resourceVersion, made.metadata.resourceVersion);
    const stored = await get(`${cms}/put-replace`);
    assert.deepEqual(stored.data, { c: '3' });
    assert.equal(stored.metadata.resourceVersion, out.metadata.resourceVersion);
    // the server ignores a uid or creationTimestamp sent on update
    const again = ok(
      await c.raw('PUT', `${cms}/put-replace`, { body: { ...stored, metadata: { ...stored.metadata, creationTimestamp: '2001-01-01T00:00:00Z' }, data: { d: '4' } } }),
      200,
      'PUT with another creationTimestamp',
    );
    assert.equal(again.metadata.creationTimestamp, made.metadata.creationTimestamp);
  });

  test('a stale metadata.resourceVersion is 409 Conflict and changes nothing', async () => {
    const made = await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'put-stale' }, data: { a: '1' } });
    ok(await c.raw('PUT', `${cms}/put-stale`, { body: { ...made, data: { a: '2' } } }), 200, 'first PUT');
    const s = expectStatus(await c.raw('PUT', `${cms}/put-stale`, { body: { ...made, data: { a: '3' } } }), 409, 'Conflict', 'stale PUT');
    assert.equal(s.message, 'Operation cannot be fulfilled on configmaps "put-stale": the object has been modified; please apply your changes to the latest version and try again');
    assert.deepEqual(s.details, { name: 'put-stale', kind: 'configmaps' });
    assert.deepEqual((await get(`${cms}/put-stale`)).data, { a: '2' });

    const d = await create(`${apps}/deployments`, DEPLOYMENT('put-stale'));
    ok(await c.raw('PUT', `${apps}/deployments/put-stale`, { body: { ...d, spec: { ...d.spec, replicas: 3 } } }), 200, 'first deployment PUT');
    const ds = expectStatus(await c.raw('PUT', `${apps}/deployments/put-stale`, { body: { ...d, spec: { ...d.spec, replicas: 4 } } }), 409, 'Conflict', 'stale deployment PUT');
    assert.equal(ds.message, 'Operation cannot be fulfilled on deployments.apps "put-stale": the object has been modified; please apply your changes to the latest version and try again');
    assert.deepEqual(ds.details, { name: 'put-stale', group: 'apps', kind: 'deployments' });
    assert.equal((await get(`${apps}/deployments/put-stale`)).spec.replicas, 3);
  });

  test('a PUT without metadata.resourceVersion is unconditional', async () => {
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'put-uncond' }, data: { a: '1' } });
    ok(await c.raw('PATCH', `${cms}/put-uncond`, { body: '{"data":{"a":"2"}}', headers: { 'content-type': 'application/merge-patch+json' } }), 200, 'PATCH');
    const out = ok(await c.raw('PUT', `${cms}/put-uncond`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'put-uncond' }, data: { a: 'mine' } } }), 200, 'PUT');
    assert.deepEqual(out.data, { a: 'mine' });
  });

  test('a PUT whose name differs from the URL is 400', async () => {
    const made = await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'put-name' }, data: { a: '1' } });
    const s = expectStatus(await c.raw('PUT', `${cms}/put-name`, { body: { ...made, metadata: { ...made.metadata, name: 'other' } } }), 400, 'BadRequest', 'name mismatch');
    assert.equal(s.message, 'the name of the object (other) does not match the name on the URL (put-name)');
    const n = expectStatus(await c.raw('PUT', `${cms}/put-name`, { body: { ...made, metadata: { ...made.metadata, namespace: 'kube-system' } } }), 400, 'BadRequest', 'namespace mismatch');
    assert.equal(n.message, 'the namespace of the object (kube-system) does not match the namespace on the request (default)');
    assert.deepEqual((await get(`${cms}/put-name`)).data, { a: '1' });
    // a uid that is not the stored one is a failed precondition
    const u = expectStatus(await c.raw('PUT', `${cms}/put-name`, { body: { ...made, metadata: { ...made.metadata, uid: '00000000-0000-0000-0000-000000000000' } } }), 409, 'Conflict', 'uid mismatch');
    assert.match(
      u.message,
      new RegExp(
        `^Operation cannot be fulfilled on configmaps "put-name": StorageError: invalid object, Code: 4, Key: (/registry)?/configmaps/default/put-name, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000, UID in object meta: ${made.metadata.uid}$`,
      ),
    );
    assert.deepEqual((await get(`${cms}/put-name`)).data, { a: '1' });
  });

  test('a PUT of an absent object creates it (201) for the kinds that allow it', async () => {
    const cases: [string, any][] = [
      [`/api/v1/namespaces/${NS}/services/cou-svc`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'cou-svc' }, spec: { selector: { app: 'x' }, ports: [{ port: 80 }] } }],
      [`/api/v1/namespaces/${NS}/endpoints/cou-ep`, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'cou-ep' }, subsets: [{ addresses: [{ ip: '10.1.2.3' }], ports: [{ port: 80 }] }] }],
      [
        `/api/v1/namespaces/${NS}/events/cou-ev`,
        { apiVersion: 'v1', kind: 'Event', metadata: { name: 'cou-ev' }, involvedObject: { kind: 'ConfigMap', name: 'x', namespace: NS }, reason: 'Test', message: 'm', type: 'Normal', source: { component: 'test' } },
      ],
      [`/api/v1/namespaces/${NS}/limitranges/cou-lr`, { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'cou-lr' }, spec: { limits: [{ type: 'Container', default: { cpu: '500m' } }] } }],
      [`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/cou-lease`, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'cou-lease' }, spec: { holderIdentity: 'me', leaseDurationSeconds: 15 } }],
      ['/apis/node.k8s.io/v1/runtimeclasses/cou-rc', { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'cou-rc' }, handler: 'runc' }],
      [`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles/cou-role`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'cou-role' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }],
      [
        `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings/cou-rb`,
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'cou-rb' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cou-role' }, subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }] },
      ],
      ['/apis/rbac.authorization.k8s.io/v1/clusterroles/cou-cr', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'cou-cr' }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }] }],
      [
        '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/cou-crb',
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'cou-crb' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cou-cr' }, subjects: [{ kind: 'Group', name: 'devs', apiGroup: 'rbac.authorization.k8s.io' }] },
      ],
    ];
    for (const [path, body] of cases) {
      const r = await c.raw('PUT', path, { body });
      const out = ok(r, 201, `PUT ${path}`);
      assert.equal(out.kind, body.kind);
      assert.ok(out.metadata.uid, path);
      assert.ok(out.metadata.resourceVersion, path);
      assert.ok(out.metadata.creationTimestamp, path);
      const stored = await get(path);
      assert.equal(stored.metadata.uid, out.metadata.uid, path);
      // a second PUT of the same body (no resourceVersion) updates it: 200
      ok(await c.raw('PUT', path, { body }), 200, `second PUT ${path}`);
    }
    const svc = await get(`/api/v1/namespaces/${NS}/services/cou-svc`);
    assert.match(svc.spec.clusterIP, /^10\.(9[6-9]|10[0-9]|11[01])\.\d+\.\d+$/);
    assert.deepEqual(svc.spec.clusterIPs, [svc.spec.clusterIP]);
  });

  test('a PUT of an absent object is 404 for the kinds that do not allow create-on-update', async () => {
    const cases: [string, any, string][] = [
      [`${cms}/cou-cm`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cou-cm' }, data: { a: '1' } }, 'configmaps "cou-cm" not found'],
      [`/api/v1/namespaces/${NS}/secrets/cou-secret`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'cou-secret' }, stringData: { a: '1' } }, 'secrets "cou-secret" not found'],
      [`${apps}/deployments/cou-deploy`, DEPLOYMENT('cou-deploy'), 'deployments.apps "cou-deploy" not found'],
      [`/api/v1/namespaces/${NS}/pods/cou-pod`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'cou-pod' }, spec: { containers: [container()] } }, 'pods "cou-pod" not found'],
    ];
    for (const [path, body, message] of cases) {
      const s = expectStatus(await c.raw('PUT', path, { body }), 404, 'NotFound', `PUT ${path}`);
      assert.equal(s.message, message);
      expectStatus(await c.raw('GET', path), 404, 'NotFound', `GET ${path}`);
    }
  });

  test('the field manager of an update defaults to the User-Agent up to its first slash', async () => {
    const made = await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'put-ua' }, data: { a: '1' } });
    const r = await c.raw('PUT', `${cms}/put-ua`, { body: { ...made, data: { a: '1', b: '2' } }, headers: { 'user-agent': 'my-tool/v1.2.3 (linux/amd64) abc' } });
    const out = ok(r, 200, 'PUT');
    const entry = out.metadata.managedFields.find((m: any) => m.manager === 'my-tool');
    assert.ok(entry, JSON.stringify(out.metadata.managedFields));
    assert.equal(entry.operation, 'Update');
    assert.equal(entry.apiVersion, 'v1');
    assert.equal(entry.fieldsType, 'FieldsV1');
    assert.deepEqual(entry.fieldsV1, { 'f:data': { 'f:b': {} } });
    // an explicit fieldManager wins
    const r2 = await c.raw('PUT', `${cms}/put-ua?fieldManager=explicit`, { body: { ...out, data: { a: '1', b: '2', c: '3' } }, headers: { 'user-agent': 'my-tool/v1' } });
    const out2 = ok(r2, 200, 'PUT with fieldManager');
    const explicit = out2.metadata.managedFields.find((m: any) => m.manager === 'explicit');
    assert.deepEqual(explicit?.fieldsV1, { 'f:data': { 'f:c': {} } });
    assert.deepEqual(out2.metadata.managedFields.find((m: any) => m.manager === 'my-tool')?.fieldsV1, { 'f:data': { 'f:b': {} } });
  });
});

describe('metadata.generation', () => {
  const kinds: { kind: string; collection: string; make: (n: string) => any; spec: (o: any) => void; status: any }[] = [
    { kind: 'Deployment', collection: `${apps}/deployments`, make: DEPLOYMENT, spec: (o) => (o.spec.replicas = 5), status: { observedGeneration: 1, replicas: 1 } },
    { kind: 'ReplicaSet', collection: `${apps}/replicasets`, make: REPLICASET, spec: (o) => (o.spec.replicas = 5), status: { replicas: 1, observedGeneration: 1 } },
    { kind: 'StatefulSet', collection: `${apps}/statefulsets`, make: STATEFULSET, spec: (o) => (o.spec.replicas = 5), status: { replicas: 1, observedGeneration: 1, availableReplicas: 0 } },
    {
      kind: 'DaemonSet',
      collection: `${apps}/daemonsets`,
      make: DAEMONSET,
      spec: (o) => (o.spec.minReadySeconds = 5),
      status: { currentNumberScheduled: 1, numberMisscheduled: 0, desiredNumberScheduled: 1, numberReady: 0, observedGeneration: 1 },
    },
    { kind: 'Job', collection: `/apis/batch/v1/namespaces/${NS}/jobs`, make: JOB, spec: (o) => (o.spec.parallelism = 2), status: undefined },
    { kind: 'CronJob', collection: `/apis/batch/v1/namespaces/${NS}/cronjobs`, make: CRONJOB, spec: (o) => (o.spec.schedule = '*/7 * * * *'), status: { lastScheduleTime: '2025-01-01T00:00:00Z' } },
  ];
  for (const k of kinds) {
    test(`${k.kind}: 1 on create, bumped by each change of spec, not by labels or status`, async () => {
      const name = `gen-${k.kind.toLowerCase()}`;
      const made = await create(k.collection, k.make(name));
      assert.equal(made.metadata.generation, 1);
      const path = `${k.collection}/${name}`;

      // a label change: no bump
      const cur = await get(path);
      cur.metadata.labels.extra = 'yes';
      const l = ok(await c.raw('PUT', path, { body: cur }), 200, 'PUT labels');
      assert.equal(l.metadata.generation, 1, 'labels do not bump the generation');

      // a spec change: bump
      k.spec(l);
      const s = ok(await c.raw('PUT', path, { body: l }), 200, 'PUT spec');
      assert.equal(s.metadata.generation, 2, 'a spec change bumps the generation');

      // a PUT of the same object: no bump, no new resourceVersion
      const same = ok(await c.raw('PUT', path, { body: s }), 200, 'PUT unchanged');
      assert.equal(same.metadata.generation, 2);
      assert.equal(same.metadata.resourceVersion, s.metadata.resourceVersion);

      // a status change through /status: no bump (on the current object: the kind's controller
      // may have written its own status since, and a stale resourceVersion is a conflict)
      if (k.status) {
        let r = await c.raw('PUT', `${path}/status`, { body: { ...s, status: k.status } });
        for (let i = 0; r.status === 409 && i < 10; i++) r = await c.raw('PUT', `${path}/status`, { body: { ...(await get(path)), status: k.status } });
        const st = ok(r, 200, 'PUT status');
        assert.equal(st.metadata.generation, 2, 'status does not bump the generation');
        for (const [f, v] of Object.entries(k.status)) assert.deepEqual(st.status[f], v, `status.${f}`);
      }

      // a spec change by merge patch: bump
      const p = ok(await c.raw('PATCH', path, { body: { metadata: { labels: { other: 'x' } } }, headers: { 'content-type': 'application/merge-patch+json' } }), 200, 'PATCH labels');
      assert.equal(p.metadata.generation, 2);
      const spec2 = k.kind === 'DaemonSet' ? { minReadySeconds: 9 } : k.kind === 'CronJob' ? { suspend: true } : k.kind === 'Job' ? { parallelism: 3 } : { replicas: 7 };
      const p2 = ok(await c.raw('PATCH', path, { body: { spec: spec2 }, headers: { 'content-type': 'application/merge-patch+json' } }), 200, 'PATCH spec');
      assert.equal(p2.metadata.generation, 3);
    });
  }

  test('Deployment: an annotation change bumps the generation too (annotations are copied to ReplicaSets)', async () => {
    const made = await create(`${apps}/deployments`, DEPLOYMENT('gen-annot'));
    const p = ok(
      await c.raw('PATCH', `${apps}/deployments/gen-annot`, { body: { metadata: { annotations: { note: 'x' } } }, headers: { 'content-type': 'application/merge-patch+json' } }),
      200,
      'PATCH annotation',
    );
    assert.equal(made.metadata.generation, 1);
    assert.equal(p.metadata.generation, 2);
    const rs = await create(`${apps}/replicasets`, REPLICASET('gen-annot'));
    const q = ok(
      await c.raw('PATCH', `${apps}/replicasets/gen-annot`, { body: { metadata: { annotations: { note: 'x' } } }, headers: { 'content-type': 'application/merge-patch+json' } }),
      200,
      'PATCH rs annotation',
    );
    assert.equal(rs.metadata.generation, 1);
    assert.equal(q.metadata.generation, 1, 'a ReplicaSet bumps only on spec');
  });

  test('the other kinds Kubernetes 1.33 counts generations of, each by what it counts', async () => {
    const merge = { 'content-type': 'application/merge-patch+json' };
    const patch = async (path: string, body: object) => ok(await c.raw('PATCH', path, { body, headers: merge }), 200, `PATCH ${path}`);
    const hook = (url: string) => ({ name: 'gen.example.com', clientConfig: { url }, admissionReviewVersions: ['v1'], sideEffects: 'None', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }], namespaceSelector: { matchLabels: { never: 'x' } } });
    const cases: { path: string; body: any; counted: object; notCounted: object }[] = [
      {
        path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
        body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'gen-vwc' }, webhooks: [hook('https://127.0.0.1:1/a')] },
        counted: { webhooks: [hook('https://127.0.0.1:1/b')] },
        notCounted: { metadata: { labels: { a: 'b' } } },
      },
      {
        path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
        body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'gen-mwc' }, webhooks: [hook('https://127.0.0.1:1/a')] },
        counted: { webhooks: [hook('https://127.0.0.1:1/b')] },
        notCounted: { metadata: { annotations: { a: 'b' } } },
      },
      {
        path: '/apis/networking.k8s.io/v1/ingressclasses',
        body: { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'gen-ic' }, spec: { controller: 'example.com/a' } },
        counted: { spec: { parameters: { kind: 'X', name: 'y', apiGroup: 'example.com' } } },
        notCounted: { metadata: { labels: { a: 'b' } } },
      },
      {
        path: `/api/v1/namespaces/${NS}/podtemplates`,
        body: { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'gen-pt' }, template: podTemplate('gen-pt') },
        counted: { template: { metadata: { labels: { app: 'gen-pt2' } } } },
        notCounted: { metadata: { labels: { a: 'b' } } },
      },
      {
        path: `/api/v1/namespaces/${NS}/pods`,
        body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'gen-pod' }, spec: { schedulerName: 'none', containers: [container()] } },
        counted: { spec: { activeDeadlineSeconds: 100 } },
        notCounted: { metadata: { labels: { a: 'b' } } },
      },
      {
        path: `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`,
        body: { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'gen-eps' }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'] }] },
        counted: { endpoints: [{ addresses: ['10.0.0.2'] }] },
        notCounted: { metadata: { annotations: { a: 'b' } } },
      },
    ];
    for (const k of cases) {
      const made = await create(k.path, k.body);
      assert.equal(made.metadata.generation, 1, `${k.body.kind}: created`);
      const path = `${k.path}/${k.body.metadata.name}`;
      assert.equal((await patch(path, k.notCounted)).metadata.generation, 1, `${k.body.kind}: not counted`);
      assert.equal((await patch(path, k.counted)).metadata.generation, 2, `${k.body.kind}: counted`);
    }
    // an EndpointSlice counts its labels too
    assert.equal((await patch(`/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices/gen-eps`, { metadata: { labels: { a: 'b' } } })).metadata.generation, 3);
    // a Pod's status does not count; its ephemeral containers do
    const pod = `/api/v1/namespaces/${NS}/pods/gen-pod`;
    const st = ok(await c.raw('PATCH', `${pod}/status`, { body: { status: { message: 'hi' } }, headers: merge }), 200, 'pod status');
    assert.equal(st.metadata.generation, 2);
    const eph = ok(
      await c.raw('PATCH', `${pod}/ephemeralcontainers`, { body: { spec: { ephemeralContainers: [{ name: 'debug', image: 'busybox', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent' }] } }, headers: merge }),
      200,
      'ephemeral containers',
    );
    assert.equal(eph.metadata.generation, 3);
  });

  test('a CertificateSigningRequest records who created it, whatever the body says', async () => {
    const csr = ok(
      await c.raw('POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
        body: {
          apiVersion: 'certificates.k8s.io/v1',
          kind: 'CertificateSigningRequest',
          metadata: { name: 'gen-csr' },
          spec: { request: csrRequest('gen-csr'), signerName: 'example.com/signer', usages: ['client auth'], username: 'mallory', groups: ['system:masters'], uid: 'x' },
        },
      }),
      201,
      'create CSR',
    );
    assert.equal(csr.spec.username, 'kubernetes-admin');
    assert.equal(csr.spec.uid, undefined);
    assert.deepEqual(csr.spec.groups, ['system:masters', 'system:authenticated']);
    assert.deepEqual(Object.keys(csr.spec.extra ?? {}), ['authentication.kubernetes.io/credential-id']);
    const table = c.kubectl(['get', 'csr', 'gen-csr', '--no-headers', '-o', 'custom-columns=REQUESTOR:.spec.username']);
    assert.equal(table.stdout.trim(), 'kubernetes-admin');
  });

  test('kinds without generation tracking leave metadata.generation out', async () => {
    const cm = await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gen-none' }, data: { a: '1' } });
    assert.equal(cm.metadata.generation, undefined);
  });
});

describe('status subresource', () => {
  test('the main resource ignores status; /status ignores spec and labels', async () => {
    const made = await create(`${apps}/deployments`, { ...DEPLOYMENT('st-deploy'), status: { replicas: 9, observedGeneration: 9 } });
    assert.deepEqual(made.status, {}, 'status sent on create is dropped');
    const cur = await get(`${apps}/deployments/st-deploy`);
    const main = ok(await c.raw('PUT', `${apps}/deployments/st-deploy`, { body: { ...cur, spec: { ...cur.spec, replicas: 3 }, status: { replicas: 7 } } }), 200, 'PUT main');
    assert.equal(main.spec.replicas, 3);
    assert.deepEqual(main.status, {});

    const viaStatus = await get(`${apps}/deployments/st-deploy/status`);
    assert.equal(viaStatus.kind, 'Deployment');
    assert.equal(viaStatus.metadata.resourceVersion, main.metadata.resourceVersion);
    const st = ok(
      await c.raw('PUT', `${apps}/deployments/st-deploy/status`, {
        body: { ...viaStatus, metadata: { ...viaStatus.metadata, labels: { app: 'st-deploy', changed: 'yes' } }, spec: { ...viaStatus.spec, replicas: 10 }, status: { replicas: 4, observedGeneration: 2 } },
      }),
      200,
      'PUT status',
    );
    assert.equal(st.spec.replicas, 3, 'spec is ignored by /status');
    assert.deepEqual(st.metadata.labels, { app: 'st-deploy' }, 'labels are ignored by /status');
    assert.equal(st.status.replicas, 4);
    assert.equal(st.status.observedGeneration, 2);
    const stored = await get(`${apps}/deployments/st-deploy`);
    assert.equal(stored.spec.replicas, 3);
    assert.equal(stored.status.replicas, 4);

    // merge patch on /status
    const mp = ok(
      await c.raw('PATCH', `${apps}/deployments/st-deploy/status`, { body: { spec: { replicas: 1 }, status: { readyReplicas: 2 } }, headers: { 'content-type': 'application/merge-patch+json' } }),
      200,
      'PATCH status',
    );
    assert.equal(mp.spec.replicas, 3);
    assert.equal(mp.status.readyReplicas, 2);
    // a stale resourceVersion on /status is a conflict too
    expectStatus(await c.raw('PUT', `${apps}/deployments/st-deploy/status`, { body: viaStatus }), 409, 'Conflict', 'stale status PUT');
  });

  test('status writes of FlowSchema, ServiceCIDR and ValidatingAdmissionPolicy keep the metadata their strategies take from the stored object', async () => {
    const meta = { labels: { zz: '1' }, annotations: { za: '1' }, finalizers: ['x.io/f'] };
    const MERGE = { 'content-type': 'application/merge-patch+json' };
    const fs = await create('/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas', {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 'st-fs' },
      spec: { priorityLevelConfiguration: { name: 'global-default' }, matchingPrecedence: 9000 },
    });
    const sc = await create('/apis/networking.k8s.io/v1/servicecidrs', { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'st-sc' }, spec: { cidrs: ['10.250.0.0/24'] } });
    const vap = await create('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'st-vap' },
      spec: { matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] }, validations: [{ expression: 'true' }] },
    });
    for (const [path, made] of [
      ['/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/st-fs', fs],
      ['/apis/networking.k8s.io/v1/servicecidrs/st-sc', sc],
      ['/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/st-vap', vap],
    ] as const) {
      const r = ok(await c.raw('PATCH', `${path}/status`, { body: { metadata: meta }, headers: MERGE }), 200, path);
      const now = await get(path);
      for (const k of ['labels', 'annotations'] as const) {
        assert.deepEqual(r.metadata[k], made.metadata[k], `${path}: ${k} of the answer`);
        assert.deepEqual(now.metadata[k], made.metadata[k], `${path}: ${k} stored`);
      }
      // (the controller manager's service-cidr-controller adds a finalizer of its own meanwhile)
      assert.ok(!(now.metadata.finalizers ?? []).includes('x.io/f'), `${path}: finalizers stored`);
    }
  });

  test('a PersistentVolume\'s status.lastPhaseTransitionTime: set at create, and when a status write changes the phase', async () => {
    const pv = await create('/api/v1/persistentvolumes', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'st-pv' },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/st-pv' } },
    });
    assert.deepEqual(Object.keys(pv.status), ['phase', 'lastPhaseTransitionTime']);
    assert.equal(pv.status.phase, 'Pending');
    assert.match(pv.status.lastPhaseTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    await new Promise((r) => setTimeout(r, 1100));
    const MERGE = { 'content-type': 'application/merge-patch+json' };
    const released = ok(await c.raw('PATCH', '/api/v1/persistentvolumes/st-pv/status', { body: { status: { phase: 'Released' } }, headers: MERGE }), 200, 'phase');
    assert.ok(Date.parse(released.status.lastPhaseTransitionTime) > Date.parse(pv.status.lastPhaseTransitionTime));
    const same = ok(await c.raw('PATCH', '/api/v1/persistentvolumes/st-pv/status', { body: { status: { message: 'x' } }, headers: MERGE }), 200, 'no phase change');
    assert.equal(same.status.lastPhaseTransitionTime, released.status.lastPhaseTransitionTime);
  });

  test('a CSR\'s approval subresource takes the sent metadata and conditions, nothing else (csrApprovalStrategy)', async () => {
    const made = await create('/apis/certificates.k8s.io/v1/certificatesigningrequests', {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: 'st-csr' },
      spec: { request: csrRequest('st-csr'), signerName: 'example.com/signer', usages: ['client auth'] },
    });
    const cond = { type: 'Approved', status: 'True', reason: 'Test', message: 'ok' };
    const put = ok(
      await c.raw('PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/st-csr/approval', {
        body: { ...made, metadata: { ...made.metadata, labels: { zz: '1' } }, spec: { ...made.spec, usages: ['server auth'] }, status: { conditions: [cond] } },
      }),
      200,
      'PUT approval',
    );
    assert.deepEqual(put.metadata.labels, { zz: '1' });
    assert.deepEqual(put.spec.usages, ['client auth']);
    assert.equal(put.status.conditions[0].type, 'Approved');
    const patched = ok(
      await c.raw('PATCH', '/apis/certificates.k8s.io/v1/certificatesigningrequests/st-csr/approval', { body: { metadata: { labels: { zz: '2' } } }, headers: { 'content-type': 'application/merge-patch+json' } }),
      200,
      'PATCH approval',
    );
    assert.deepEqual(patched.metadata.labels, { zz: '2' });
  });

  test('a ConfigMap has no status subresource: 404', async () => {
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'st-none' } });
    const s = expectStatus(await c.raw('GET', `${cms}/st-none/status`), 404, 'NotFound', 'GET status');
    assert.equal(s.message, 'the server could not find the requested resource');
  });
});

describe('scale subresource', () => {
  const targets: { what: string; collection: string; make: (n: string) => any; scalePath: (n: string) => string }[] = [
    { what: 'Deployment', collection: `${apps}/deployments`, make: DEPLOYMENT, scalePath: (n) => `${apps}/deployments/${n}/scale` },
    { what: 'ReplicaSet', collection: `${apps}/replicasets`, make: REPLICASET, scalePath: (n) => `${apps}/replicasets/${n}/scale` },
    { what: 'StatefulSet', collection: `${apps}/statefulsets`, make: STATEFULSET, scalePath: (n) => `${apps}/statefulsets/${n}/scale` },
    { what: 'ReplicationController', collection: `/api/v1/namespaces/${NS}/replicationcontrollers`, make: RC, scalePath: (n) => `/api/v1/namespaces/${NS}/replicationcontrollers/${n}/scale` },
  ];
  for (const t of targets) {
    test(`${t.what}: GET, PUT and PATCH of /scale (autoscaling/v1 Scale)`, async () => {
      const name = `sc-${t.what.toLowerCase()}`;
      const made = await create(t.collection, t.make(name));
      const sc = await get(t.scalePath(name));
      assert.equal(sc.kind, 'Scale');
      assert.equal(sc.apiVersion, 'autoscaling/v1');
      assert.equal(sc.metadata.name, name);
      assert.equal(sc.metadata.namespace, NS);
      assert.equal(sc.metadata.uid, made.metadata.uid);
      assert.equal(sc.metadata.resourceVersion, made.metadata.resourceVersion);
      assert.equal(sc.metadata.creationTimestamp, made.metadata.creationTimestamp);
      assert.deepEqual(sc.spec, { replicas: 2 });
      assert.deepEqual(sc.status, { replicas: 0, selector: `app=${name}` });

      const put = ok(await c.raw('PUT', t.scalePath(name), { body: { ...sc, spec: { replicas: 4 } } }), 200, 'PUT scale');
      assert.equal(put.kind, 'Scale');
      assert.equal(put.spec.replicas, 4);
      const obj = await get(`${t.collection}/${name}`);
      assert.equal(obj.spec.replicas, 4);
      assert.equal(put.metadata.resourceVersion, obj.metadata.resourceVersion);
      if (t.what !== 'ReplicationController') assert.equal(obj.metadata.generation, 2);

      // stale resourceVersion on the Scale: Conflict naming the parent resource
      const stale = expectStatus(await c.raw('PUT', t.scalePath(name), { body: { ...sc, spec: { replicas: 6 } } }), 409, 'Conflict', 'stale scale PUT');
      assert.match(stale.message, new RegExp(`^Operation cannot be fulfilled on ${t.what === 'ReplicationController' ? 'replicationcontrollers' : `${t.what.toLowerCase()}s\\.apps`} "${name}": the object has been modified`));

      const mp = ok(await c.raw('PATCH', t.scalePath(name), { body: { spec: { replicas: 1 } }, headers: { 'content-type': 'application/merge-patch+json' } }), 200, 'merge PATCH scale');
      assert.equal(mp.spec.replicas, 1);
      const jp = ok(
        await c.raw('PATCH', t.scalePath(name), { body: JSON.stringify([{ op: 'replace', path: '/spec/replicas', value: 3 }]), headers: { 'content-type': 'application/json-patch+json' } }),
        200,
        'json PATCH scale',
      );
      assert.equal(jp.spec.replicas, 3);
      const sp = ok(await c.raw('PATCH', t.scalePath(name), { body: { spec: { replicas: 0 } }, headers: { 'content-type': 'application/strategic-merge-patch+json' } }), 200, 'strategic PATCH scale');
      assert.deepEqual(sp.spec, {}, 'a Scale of 0 replicas omits spec.replicas');
      assert.equal((await get(`${t.collection}/${name}`)).spec.replicas, 0);

      // a negative count is invalid
      const inv = expectStatus(await c.raw('PATCH', t.scalePath(name), { body: { spec: { replicas: -1 } }, headers: { 'content-type': 'application/merge-patch+json' } }), 422, 'Invalid', 'negative replicas');
      assert.equal(inv.message, `Scale.autoscaling "${name}" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`);
      assert.equal((await get(`${t.collection}/${name}`)).spec.replicas, 0);

      // a uid in the Scale is a precondition (409 naming <resource>/scale)
      const wrongUID = expectStatus(
        await c.raw('PUT', t.scalePath(name), { body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name, namespace: NS, uid: 'aaaa' }, spec: { replicas: 2 } } }),
        409,
        'Conflict',
        'uid precondition',
      );
      const res = t.what === 'ReplicationController' ? 'replicationcontrollers/scale' : `${t.what.toLowerCase()}s/scale.apps`;
      assert.equal(wrongUID.message, `Operation cannot be fulfilled on ${res} "${name}": Precondition failed: UID in precondition: aaaa, UID in object meta: ${made.metadata.uid}`);
      assert.equal((await get(`${t.collection}/${name}`)).spec.replicas, 0);
    });
  }

  test('the Scale\'s status.selector is the selector\'s String(): requirements by key, values sorted', async () => {
    const rs: any = REPLICASET('sc-order');
    rs.spec.selector = { matchLabels: { zz: '1', aa: '2' }, matchExpressions: [{ key: 'mm', operator: 'In', values: ['q2', 'q1'] }] };
    rs.spec.template.metadata.labels = { zz: '1', aa: '2', mm: 'q1' };
    await create(`${apps}/replicasets`, rs);
    assert.equal((await get(`${apps}/replicasets/sc-order/scale`)).status.selector, 'aa=2,mm in (q1,q2),zz=1');
  });

  test('/scale of an absent object is 404 naming the parent resource', async () => {
    const s = expectStatus(await c.raw('GET', `${apps}/deployments/nope/scale`), 404, 'NotFound', 'GET scale');
    assert.equal(s.message, 'deployments.apps "nope" not found');
  });

  test('kubectl scale (1.33 and 1.27)', async () => {
    for (const v of ['1.33', '1.27']) {
      const tag = v.replace('.', '');
      await create(`${apps}/deployments`, DEPLOYMENT(`kscale-${tag}`));
      await create(`${apps}/statefulsets`, STATEFULSET(`kscale-${tag}`));
      await create(`/api/v1/namespaces/${NS}/replicationcontrollers`, RC(`kscale-${tag}`));
      let r = c.kubectl(['scale', `deployment/kscale-${tag}`, '--replicas=5'], { version: v });
      assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 0, stdout: `deployment.apps/kscale-${tag} scaled\n`, stderr: '' });
      assert.equal((await get(`${apps}/deployments/kscale-${tag}`)).spec.replicas, 5);
      r = c.kubectl(['scale', 'statefulset', `kscale-${tag}`, '--replicas=3'], { version: v });
      assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 0, stdout: `statefulset.apps/kscale-${tag} scaled\n`, stderr: '' });
      r = c.kubectl(['scale', 'rc', `kscale-${tag}`, '--replicas=1'], { version: v });
      assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 0, stdout: `replicationcontroller/kscale-${tag} scaled\n`, stderr: '' });
      assert.equal((await get(`/api/v1/namespaces/${NS}/replicationcontrollers/kscale-${tag}`)).spec.replicas, 1);
      // --current-replicas precondition
      r = c.kubectl(['scale', `deployment/kscale-${tag}`, '--current-replicas=5', '--replicas=2'], { version: v });
      assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 0, stdout: `deployment.apps/kscale-${tag} scaled\n`, stderr: '' });
      r = c.kubectl(['scale', `deployment/kscale-${tag}`, '--current-replicas=9', '--replicas=4'], { version: v });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /Expected replicas to be 9, was 2/);
      assert.equal((await get(`${apps}/deployments/kscale-${tag}`)).spec.replicas, 2);
    }
  });
});

describe('no-op writes', () => {
  test('an unchanged PUT, merge patch, strategic patch, JSON patch or apply keeps resourceVersion and managedFields', async () => {
    const made = await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'noop', labels: { a: 'b' } }, data: { a: '1' } });
    // let the clock pass a second boundary so a rewritten managedFields time would show
    await new Promise((r) => setTimeout(r, 1100));
    const path = `${cms}/noop`;
    const checks: [string, Promise<RawResponse>][] = [
      ['PUT', c.raw('PUT', path, { body: made })],
      ['PUT without resourceVersion', c.raw('PUT', path, { body: { ...made, metadata: { ...made.metadata, resourceVersion: undefined } } })],
      ['merge', c.raw('PATCH', path, { body: '{"data":{"a":"1"}}', headers: { 'content-type': 'application/merge-patch+json' } })],
      ['strategic', c.raw('PATCH', path, { body: '{"metadata":{"labels":{"a":"b"}}}', headers: { 'content-type': 'application/strategic-merge-patch+json' } })],
      ['json', c.raw('PATCH', path, { body: '[{"op":"test","path":"/data/a","value":"1"}]', headers: { 'content-type': 'application/json-patch+json' } })],
      ['empty merge', c.raw('PATCH', path, { body: '{}', headers: { 'content-type': 'application/merge-patch+json' } })],
    ];
    for (const [what, p] of checks) {
      const out = ok(await p, 200, what);
      assert.equal(out.metadata.resourceVersion, made.metadata.resourceVersion, what);
      assert.deepEqual(out.metadata.managedFields, made.metadata.managedFields, what);
    }
    const stored = await get(path);
    assert.equal(stored.metadata.resourceVersion, made.metadata.resourceVersion);
    assert.deepEqual(stored.metadata.managedFields, made.metadata.managedFields);

    // server-side apply: the second identical apply is a no-op
    const applied = ok(
      await c.raw('PATCH', `${path}?fieldManager=noop-applier`, { body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"noop"},"data":{"b":"2"}}', headers: { 'content-type': 'application/apply-patch+yaml' } }),
      200,
      'apply',
    );
    await new Promise((r) => setTimeout(r, 1100));
    const again = ok(
      await c.raw('PATCH', `${path}?fieldManager=noop-applier`, { body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"noop"},"data":{"b":"2"}}', headers: { 'content-type': 'application/apply-patch+yaml' } }),
      200,
      'apply again',
    );
    assert.equal(again.metadata.resourceVersion, applied.metadata.resourceVersion);
    assert.deepEqual(again.metadata.managedFields, applied.metadata.managedFields);
  });

  test('kubectl patch of an unchanged object prints "patched (no change)" (1.33 and 1.27)', async () => {
    await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'noop-k' }, data: { a: '1' } });
    for (const v of ['1.33', '1.27']) {
      for (const [type, p] of [
        ['strategic', '{"data":{"a":"1"}}'],
        ['merge', '{"data":{"a":"1"}}'],
        ['json', '[{"op":"replace","path":"/data/a","value":"1"}]'],
      ]) {
        const before = await get(`${cms}/noop-k`);
        const r = c.kubectl(['patch', 'configmap', 'noop-k', '--type', type, '-p', p], { version: v });
        assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 0, stdout: 'configmap/noop-k patched (no change)\n', stderr: '' }, `${v} ${type}`);
        assert.equal((await get(`${cms}/noop-k`)).metadata.resourceVersion, before.metadata.resourceVersion);
      }
      const r = c.kubectl(['patch', 'configmap', 'noop-k', '-p', `{"data":{"v${v.replace('.', '')}":"x"}}`], { version: v });
      assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 0, stdout: 'configmap/noop-k patched\n', stderr: '' });
    }
  });
});

describe('managedFields of creates', () => {
  test('creates of one structure get their managedFields as Kubernetes writes them, in the answer, on a GET and in a list, a value holding the serializer placeholder too', async () => {
    const names = ['mf-a', 'mf-b', 'mf-c'];
    const made = [];
    for (const n of names) made.push(await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n, labels: { app: 'mf' } }, data: { k: n } }));
    // a data value holding the text the store serializes managedFields as (and resourceVersion)
    const odd = { k: '\u0002keelson:fragment\u0002', j: JSON.stringify('\u0002keelson:fragment\u0002'), rv: '\u0001keelson:resourceVersion\u0001' };
    made.push(await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mf-odd', labels: { app: 'mf' } }, data: odd }));
    const list = ok(await c.raw('GET', `${cms}?labelSelector=app%3Dmf`), 200, 'list');
    for (const m of made) {
      const mf = m.metadata.managedFields;
      assert.equal(mf.length, 1);
      assert.equal(mf[0].operation, 'Update');
      assert.equal(mf[0].fieldsType, 'FieldsV1');
      assert.match(mf[0].time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.deepEqual(Object.keys(mf[0].fieldsV1).sort(), ['f:data', 'f:metadata']);
      assert.deepEqual(mf[0].fieldsV1['f:metadata'], { 'f:labels': { '.': {}, 'f:app': {} } });
      const read = await get(`${cms}/${m.metadata.name}`);
      assert.deepEqual(read, m);
      const item = list.items.find((i: any) => i.metadata.name === m.metadata.name);
      assert.deepEqual(item.metadata, m.metadata);
      assert.deepEqual(item.data, m.data);
    }
    assert.deepEqual(made[3].data, odd);
    assert.deepEqual(made[3].metadata.managedFields[0].fieldsV1['f:data'], { '.': {}, 'f:j': {}, 'f:k': {}, 'f:rv': {} });
    // the raw answer is the JSON of the object: the managedFields member where Kubernetes puts it
    const raw = await c.raw('GET', `${cms}/mf-b`);
    assert.match(raw.text, /"labels":\{"app":"mf"\},"managedFields":\[\{"manager":"[^"]+","operation":"Update","apiVersion":"v1","time":"[^"]+","fieldsType":"FieldsV1","fieldsV1":\{/);
  });
});

describe('metadata order', () => {
  // Kubernetes writes ObjectMeta in its Go struct's field order, whatever order the client sent:
  // a client that shows the body as it came (curl, a client library's raw answer) sees it so
  const ORDER = ['name', 'generateName', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields'];
  const inOrder = (m: any, what: string) => {
    const keys = Object.keys(m);
    assert.deepEqual(keys, ORDER.filter((k) => keys.includes(k)), `${what}: ${keys.join(', ')}`);
  };

  test('a create, a GET, a list, a watch event, a patch, a PUT, a status update and a delete write metadata in ObjectMeta order', async () => {
    const w = c.stream(`/apis/apps/v1/namespaces/${NS}/deployments?watch=1&fieldSelector=metadata.name%3Dorder-d`);
    await w.ready;
    const body = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { finalizers: ['example.com/hold'], annotations: { a: 'b' }, labels: { app: 'order-d' }, namespace: NS, name: 'order-d' },
      spec: DEPLOYMENT('order-d').spec,
    };
    const made = await create(`${apps}/deployments`, body);
    inOrder(made.metadata, 'create');
    assert.deepEqual(Object.keys(made).slice(0, 3), ['kind', 'apiVersion', 'metadata']);
    inOrder((await get(`${apps}/deployments/order-d`)).metadata, 'GET');
    const list = await get(`${apps}/deployments?fieldSelector=metadata.name%3Dorder-d`);
    inOrder(list.items[0].metadata, 'list item');
    const patched = ok(await c.raw('PATCH', `${apps}/deployments/order-d`, { body: { metadata: { labels: { more: 'x' } } }, headers: { 'content-type': 'application/merge-patch+json' } }), 200, 'patch');
    inOrder(patched.metadata, 'patch');
    const put = ok(await c.raw('PUT', `${apps}/deployments/order-d`, { body: { ...patched, metadata: { managedFields: undefined, labels: patched.metadata.labels, resourceVersion: patched.metadata.resourceVersion, finalizers: ['example.com/hold'], name: 'order-d' }, spec: { ...patched.spec, replicas: 3 } } }), 200, 'PUT');
    inOrder(put.metadata, 'PUT');
    assert.equal(put.metadata.generation, 2);
    const status = ok(await c.raw('PUT', `${apps}/deployments/order-d/status`, { body: { ...put, status: { replicas: 0 } } }), 200, 'status');
    inOrder(status.metadata, 'status');
    const del = ok(await c.raw('DELETE', `${apps}/deployments/order-d`), 200, 'delete');
    inOrder(del.metadata, 'delete');
    assert.ok(del.metadata.deletionTimestamp);
    const gone = ok(await c.raw('PATCH', `${apps}/deployments/order-d`, { body: [{ op: 'remove', path: '/metadata/finalizers' }], headers: { 'content-type': 'application/json-patch+json' } }), 200, 'finalizers removed');
    inOrder(gone.metadata, 'the last state');
    const events = await w.until((es) => es.some((e) => e.type === 'DELETED'));
    for (const e of events) inOrder(e.object.metadata, `${e.type} event`);
    w.close();
  });
});

describe('long string values', () => {
  // the store writes long values without a backslash from the request's text (codec/verbatim.ts):
  // what comes back must be exactly the object, whatever the values hold
  test('ConfigMaps and Secrets with long values (ASCII, UTF-8, escaped, placeholder-like) read back exactly, on create and on PUT, in JSON and YAML bodies', async () => {
    const ascii = 'a'.repeat(300);
    const utf8 = 'çødé 🚀 ×'.repeat(50);
    const escaped = `${'b'.repeat(300)}\n"quoted"\\ \u0001`;
    const odd = '\u00030\u0003';
    const data = { ascii, utf8, escaped, odd, short: 'x', ['k'.repeat(253)]: ascii };
    const made = await create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'long-values', annotations: { note: ascii } }, data });
    assert.deepEqual(made.data, data);
    assert.equal(made.metadata.annotations.note, ascii);
    assert.deepEqual(await get(`${cms}/long-values`), made);
    const raw = await c.raw('GET', `${cms}/long-values`);
    assert.equal(raw.text.split(JSON.stringify(utf8)).length, 2, 'the UTF-8 value once, as JSON.stringify writes it');
    // a PUT of other long values, and without strict scan (fieldValidation=Ignore)
    const next = { ...made, data: { ascii: 'c'.repeat(400), utf8: `${utf8}!`, escaped } };
    const put = ok(await c.raw('PUT', `${cms}/long-values`, { body: next }), 200, 'PUT');
    assert.deepEqual(put.data, next.data);
    assert.deepEqual((await get(`${cms}/long-values`)).data, next.data);
    const ignored = ok(await c.raw('PUT', `${cms}/long-values?fieldValidation=Ignore`, { body: { ...put, data: { ascii } } }), 200, 'PUT, Ignore');
    assert.deepEqual(ignored.data, { ascii });
    // a Secret of 64 KiB of base64, as a Helm release is
    const blob = Buffer.alloc(48 * 1024, 7).toString('base64');
    const secret = await create(`/api/v1/namespaces/${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'long-secret' }, type: 'Opaque', data: { release: blob } });
    assert.equal(secret.data.release, blob);
    assert.equal((await get(`/api/v1/namespaces/${NS}/secrets/long-secret`)).data.release, blob);
    // a YAML body takes the plain way
    const yamlBody = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: long-yaml\ndata:\n  ascii: ${ascii}\n`;
    const fromYaml = ok(await c.raw('POST', cms, { body: yamlBody, headers: { 'content-type': 'application/yaml' } }), 201, 'POST yaml');
    assert.equal(fromYaml.data.ascii, ascii);
    assert.equal((await get(`${cms}/long-yaml`)).data.ascii, ascii);
  });
});

describe('generateName', () => {
  test('a Job created with generateName gets its generated name in its selector labels (the name is made before the strategy prepares the object, as in Kubernetes)', async () => {
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { generateName: 'gen-' },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [container('busybox')] } } },
    };
    const made = await create(`/apis/batch/v1/namespaces/${NS}/jobs`, job);
    const name: string = made.metadata.name;
    assert.match(name, /^gen-[a-z0-9]{5}$/);
    const labels = made.spec.template.metadata.labels;
    assert.equal(labels['job-name'], name);
    assert.equal(labels['batch.kubernetes.io/job-name'], name);
    assert.equal(labels['batch.kubernetes.io/controller-uid'], made.metadata.uid);
    assert.equal(made.metadata.labels['batch.kubernetes.io/job-name'], name, 'the Job takes its template labels');
    // and through kubectl, as a controller or a CI script creates them
    const r = c.kubectl(['create', '-f', '-', '-o', 'jsonpath={.metadata.name} {.spec.template.metadata.labels.job-name}'], { input: JSON.stringify(job) });
    assert.equal(r.code, 0, r.stderr);
    const [n, label] = r.stdout.split(' ');
    assert.match(n!, /^gen-/);
    assert.equal(label, n);
  });
});
