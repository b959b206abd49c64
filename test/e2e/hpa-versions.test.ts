// HorizontalPodAutoscalers in autoscaling/v1 and autoscaling/v2 against a real keelson: one set of
// stored objects, two representations, converted as kube-apiserver converts them. kubectl 1.27 to
// 1.31 create theirs through autoscaling/v1 (`kubectl autoscale`), 1.32 and later through v2; both
// must see the same autoscaler. Driven by kubectl 1.27 and 1.33 and by raw HTTPS (JSON, Protobuf,
// Table, watch).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { expectStatus, startCluster, type Cluster } from './harness.js';
import { decodeObject } from '../../src/codec/protobuf.js';

let c: Cluster;
const NS = 'hpa';
const V1 = `/apis/autoscaling/v1/namespaces/${NS}/horizontalpodautoscalers`;
const V2 = `/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers`;

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory'] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
  const d = c.kubectl(['create', 'deployment', 'web', '-n', NS, '--image=nginx']);
  assert.equal(d.code, 0, d.stderr);
});

after(async () => {
  await c?.stop();
});

test('discovery serves autoscaling/v1 beside v2, v2 preferred; kubectl explain reads either', async () => {
  const g = (await c.raw('GET', '/apis/autoscaling')).json();
  assert.deepEqual(
    g.versions.map((v: any) => v.groupVersion),
    ['autoscaling/v2', 'autoscaling/v1'],
  );
  assert.equal(g.preferredVersion.groupVersion, 'autoscaling/v2');
  const v1 = (await c.raw('GET', '/apis/autoscaling/v1')).json();
  const hpa = v1.resources.find((r: any) => r.name === 'horizontalpodautoscalers');
  assert.deepEqual([hpa.kind, hpa.namespaced, hpa.shortNames, hpa.categories], ['HorizontalPodAutoscaler', true, ['hpa'], ['all']]);
  assert.ok(v1.resources.some((r: any) => r.name === 'horizontalpodautoscalers/status'));
  const e = c.kubectl(['explain', 'hpa.spec.targetCPUUtilizationPercentage', '--api-version=autoscaling/v1']);
  assert.equal(e.code, 0, e.stderr);
  assert.match(e.stdout, /VERSION:\s+v1/);
  assert.match(e.stdout, /FIELD:\s+targetCPUUtilizationPercentage <integer>/);
});

test('kubectl 1.27 autoscale creates through autoscaling/v1; v2 and v1 read the same autoscaler', async () => {
  const r = c.kubectl(['autoscale', 'deployment', 'web', '-n', NS, '--name', 'old', '--min=2', '--max=5', '--cpu-percent=60', '-v=6'], { version: '1.27' });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /POST https:\/\/[^ ]+\/apis\/autoscaling\/v1\/namespaces\/hpa\/horizontalpodautoscalers\?fieldManager=kubectl-autoscale 201 Created/);
  const v1 = (await c.raw('GET', `${V1}/old`)).json();
  assert.deepEqual(v1.spec, { scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' }, minReplicas: 2, maxReplicas: 5, targetCPUUtilizationPercentage: 60 });
  assert.deepEqual(v1.status, { currentReplicas: 0, desiredReplicas: 0 });
  assert.equal(v1.metadata.annotations, undefined);
  // the managed fields keep the version they were written in; v1's scaleTargetRef is atomic
  assert.equal(v1.metadata.managedFields[0].apiVersion, 'autoscaling/v1');
  assert.deepEqual(v1.metadata.managedFields[0].fieldsV1['f:spec']['f:scaleTargetRef'], {});
  const v2 = (await c.raw('GET', `${V2}/old`)).json();
  assert.equal(v2.apiVersion, 'autoscaling/v2');
  assert.equal(v2.metadata.resourceVersion, v1.metadata.resourceVersion);
  assert.deepEqual(v2.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }]);
  assert.deepEqual(v2.status, { desiredReplicas: 0, currentMetrics: null });
  // kubectl 1.33 lists it through v2, 1.27 through v1 when asked for that version
  const t = c.kubectl(['get', 'hpa', 'old', '-n', NS]);
  assert.equal(t.code, 0, t.stderr);
  assert.match(t.stdout, /^old\s+Deployment\/web\s+cpu: <unknown>\/60%\s+2\s+5\s+0\s+/m);
  const t1 = c.kubectl(['get', 'horizontalpodautoscalers.v1.autoscaling', 'old', '-n', NS, '-o', 'jsonpath={.apiVersion} {.spec.targetCPUUtilizationPercentage}'], { version: '1.27' });
  assert.equal(t1.code, 0, t1.stderr);
  assert.equal(t1.stdout, 'autoscaling/v1 60');
});

test('a v1 autoscaler without a CPU target gets the 80% default v1 always had', async () => {
  const r = await c.raw('POST', V1, { body: { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'plain' }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 3 } } });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json().spec, { scaleTargetRef: { kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 80 });
  const v2 = (await c.raw('GET', `${V2}/plain`)).json();
  assert.deepEqual(v2.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
});

const FULL_V2 = {
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'full', annotations: { team: 'a' } },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    minReplicas: 1,
    maxReplicas: 10,
    metrics: [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
      { type: 'Pods', pods: { metric: { name: 'packets' }, target: { type: 'AverageValue', averageValue: '1k' } } },
      { type: 'External', external: { metric: { name: 'queue', selector: { matchLabels: { q: 'a' } } }, target: { type: 'Value', value: '30' } } },
    ],
    behavior: { scaleDown: { stabilizationWindowSeconds: 300, policies: [{ type: 'Pods', value: 4, periodSeconds: 60 }] } },
  },
};

test('what v1 has no field for travels in its annotations, as Kubernetes writes them, and comes back', async () => {
  assert.equal((await c.raw('POST', V2, { body: FULL_V2 })).status, 201);
  // the status as an autoscaler controller would write it, through v2
  const cur = (await c.raw('GET', `${V2}/full`)).json();
  cur.status = {
    currentReplicas: 3,
    desiredReplicas: 4,
    currentMetrics: [
      { type: 'Resource', resource: { name: 'cpu', current: { averageValue: '250m', averageUtilization: 70 } } },
      { type: 'Pods', pods: { metric: { name: 'packets' }, current: { averageValue: '900' } } },
    ],
    conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2026-01-02T03:04:05Z', reason: 'ReadyForNewScale', message: 'recommended size matches current size' }],
  };
  const st = await c.raw('PUT', `${V2}/full/status`, { body: cur });
  assert.equal(st.status, 200, st.text);

  const v1 = (await c.raw('GET', `${V1}/full`)).json();
  assert.deepEqual(v1.spec, { scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' }, minReplicas: 1, maxReplicas: 10, targetCPUUtilizationPercentage: 50 });
  assert.deepEqual(v1.status, { currentReplicas: 3, desiredReplicas: 4, currentCPUUtilizationPercentage: 70 });
  const a = v1.metadata.annotations;
  assert.deepEqual(Object.keys(a), [
    'autoscaling.alpha.kubernetes.io/behavior',
    'autoscaling.alpha.kubernetes.io/conditions',
    'autoscaling.alpha.kubernetes.io/current-metrics',
    'autoscaling.alpha.kubernetes.io/metrics',
    'team',
  ]);
  assert.equal(
    a['autoscaling.alpha.kubernetes.io/metrics'],
    '[{"type":"Pods","pods":{"metricName":"packets","targetAverageValue":"1k"}},{"type":"External","external":{"metricName":"queue","metricSelector":{"matchLabels":{"q":"a"}},"targetValue":"30"}}]',
  );
  assert.equal(
    a['autoscaling.alpha.kubernetes.io/current-metrics'],
    '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":70,"currentAverageValue":"250m"}},{"type":"Pods","pods":{"metricName":"packets","currentAverageValue":"900"}}]',
  );
  // (Kubernetes marshals its internal type here: Go field names; the scale-up rules are the defaults)
  assert.equal(
    a['autoscaling.alpha.kubernetes.io/behavior'],
    '{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},' +
      '"ScaleDown":{"StabilizationWindowSeconds":300,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":60}],"Tolerance":null}}',
  );
  assert.equal(
    a['autoscaling.alpha.kubernetes.io/conditions'],
    '[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-02T03:04:05Z","reason":"ReadyForNewScale","message":"recommended size matches current size"}]',
  );

  // a v1 writer that changes one field keeps everything else: the annotations turn into fields
  // again (the other metrics first, the CPU target last, as Kubernetes orders them)
  v1.spec.maxReplicas = 12;
  const put = await c.raw('PUT', `${V1}/full`, { body: v1 });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(put.json().metadata.annotations, a);
  const v2 = (await c.raw('GET', `${V2}/full`)).json();
  assert.equal(v2.spec.maxReplicas, 12);
  assert.deepEqual(
    v2.spec.metrics.map((m: any) => m.type),
    ['Pods', 'External', 'Resource'],
  );
  assert.deepEqual(v2.spec.metrics[1], FULL_V2.spec.metrics[2]);
  assert.deepEqual(v2.spec.behavior.scaleDown, { stabilizationWindowSeconds: 300, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 60 }] });
  assert.deepEqual(v2.metadata.annotations, { team: 'a' });
  assert.deepEqual(v2.status.conditions, cur.status.conditions);
  assert.equal(v2.status.currentMetrics.length, 2);
});

test('the v1 status subresource writes the CPU figure into the stored metrics', async () => {
  const v1 = (await c.raw('GET', `${V1}/old`)).json();
  v1.status = { currentReplicas: 2, desiredReplicas: 3, currentCPUUtilizationPercentage: 91 };
  v1.spec.maxReplicas = 99; // ignored: a status write changes only the status
  const r = await c.raw('PUT', `${V1}/old/status`, { body: v1 });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json().status, { currentReplicas: 2, desiredReplicas: 3, currentCPUUtilizationPercentage: 91 });
  const v2 = (await c.raw('GET', `${V2}/old`)).json();
  assert.equal(v2.spec.maxReplicas, 5);
  assert.deepEqual(v2.status.currentMetrics, [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 91 } } }]);
  const t = c.kubectl(['get', 'hpa', 'old', '-n', NS, '--no-headers']);
  assert.match(t.stdout, /cpu: 91%\/60%\s+2\s+5\s+2\s/);
});

test('a v1 watch sees writes made through v2 in its own representation; Table and Protobuf too', async () => {
  const list = (await c.raw('GET', V1)).json();
  assert.equal(list.kind, 'HorizontalPodAutoscalerList');
  assert.equal(list.apiVersion, 'autoscaling/v1');
  assert.ok(list.items.every((i: any) => i.apiVersion === undefined || i.apiVersion === 'autoscaling/v1'));
  const w = c.stream(`${V1}?watch=1&resourceVersion=${list.metadata.resourceVersion}`);
  await w.ready;
  const body = structuredClone(FULL_V2);
  body.metadata.name = 'watched';
  assert.equal((await c.raw('POST', V2, { body })).status, 201);
  const evs = await w.until((e) => e.some((x) => x.object?.metadata?.name === 'watched'));
  const ev = evs.find((x) => x.object.metadata.name === 'watched');
  assert.equal(ev.type, 'ADDED');
  assert.equal(ev.object.apiVersion, 'autoscaling/v1');
  assert.equal(ev.object.spec.targetCPUUtilizationPercentage, 50);
  assert.ok(ev.object.metadata.annotations['autoscaling.alpha.kubernetes.io/metrics']);

  // kube-apiserver prints a Table from the stored object, whatever the version asked: the metrics
  // in their stored order (the v1 fields alone would put the CPU target last)
  for (const base of [V1, V2]) {
    const table = await c.raw('GET', `${base}/watched`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    assert.equal(table.status, 200, table.text);
    assert.deepEqual(table.json().rows[0].cells.slice(0, 6), ['watched', 'Deployment/web', 'cpu: <unknown>/50%, <unknown>/1k + 1 more...', '1', 10, 0], base);
  }

  const pb = await c.raw('GET', `${V1}/watched`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
  assert.equal(pb.status, 200);
  const obj = decodeObject(pb.body) as any;
  assert.equal(obj.apiVersion, 'autoscaling/v1');
  assert.equal(obj.spec.targetCPUUtilizationPercentage, 50);
  assert.equal(obj.spec.maxReplicas, 10);
});

test('an annotation that does not unmarshal is a 400 with Go\'s error, as kube-apiserver fails to decode the request', async () => {
  const write = (name: string, annotations: Record<string, string>) =>
    c.raw('POST', V1, {
      body: { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name, annotations }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 3 } },
    });
  const s = expectStatus(await write('broken', { 'autoscaling.alpha.kubernetes.io/metrics': 'not json' }), 400, 'BadRequest');
  assert.equal(s.message, "invalid character 'o' in literal null (expecting 'u')");
  const t = expectStatus(await write('broken', { 'autoscaling.alpha.kubernetes.io/conditions': '{}' }), 400, 'BadRequest');
  assert.equal(t.message, 'json: cannot unmarshal object into Go value of type []v1.HorizontalPodAutoscalerCondition');
  assert.equal((await c.raw('GET', `${V2}/broken`)).status, 404);
  // an update too
  const cur = (await c.raw('GET', `${V1}/plain`)).json();
  cur.metadata.annotations = { 'autoscaling.alpha.kubernetes.io/current-metrics': '[' };
  expectStatus(await c.raw('PUT', `${V1}/plain`, { body: cur }), 400, 'BadRequest');
});

test('validation as Kubernetes validates its internal type: a v1 object\'s errors name the v2 paths', async () => {
  const v2 = await c.raw('POST', V2, {
    body: {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'bad' },
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'a/b' },
        minReplicas: 0,
        maxReplicas: 0,
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 0, averageValue: '-1' } } },
          { type: 'Bogus' },
          { type: 'Pods', pods: { metric: { name: 'p' }, target: { type: 'AverageValue' } }, external: { metric: { name: 'e' }, target: { type: 'Value', value: '1' } } },
        ],
        behavior: { scaleUp: { selectPolicy: 'Sometimes', stabilizationWindowSeconds: 4000, policies: [{ type: 'Pods', value: 0, periodSeconds: 2000 }] } },
      },
    },
  });
  const s = expectStatus(v2, 422, 'Invalid');
  assert.deepEqual(
    s.details.causes.map((x: any) => `${x.field}: ${x.message}`),
    [
      'spec.minReplicas: Invalid value: 0: must be greater than or equal to 1',
      'spec.maxReplicas: Invalid value: 0: must be greater than 0',
      "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'",
      'spec.metrics[0].resource.target.averageValue: Invalid value: resource.Quantity{i:resource.int64Amount{value:-1, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"-1", Format:"DecimalSI"}: must be positive',
      'spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0',
      'spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization',
      'spec.metrics[1].type: Unsupported value: "Bogus": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"',
      'spec.metrics[1].type: Unsupported value: "Bogus": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"',
      // (the external source comes first in Kubernetes' order: it is the one validated)
      'spec.metrics[2].external: Forbidden: must populate the given metric source only',
      'spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas',
      'spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 4000: must be less than or equal to 3600',
      'spec.behavior.scaleUp.selectPolicy: Unsupported value: "Sometimes": supported values: "Disabled", "Max", "Min"',
      'spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero',
      'spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 2000: must be less than or equal to 1800',
    ],
  );
  const v1 = await c.raw('POST', V1, {
    body: { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'bad1' }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, minReplicas: 3, maxReplicas: 2, targetCPUUtilizationPercentage: -5 } },
  });
  const t = expectStatus(v1, 422, 'Invalid');
  assert.equal(
    t.message,
    'HorizontalPodAutoscaler.autoscaling "bad1" is invalid: [spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`, spec.metrics[0].resource.target.averageUtilization: Invalid value: -5: must be greater than 0]',
  );
  // an empty policies list is kept for the validation, not filled with the default policies
  // (Kubernetes' defaulting copies the client's list when it is not nil), in both versions and
  // by a patch of an object whose policies were defaulted
  const empty = (spec: any) => ({ scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 3, ...spec });
  const noPolicy = 'spec.behavior.scaleDown.policies: Required value: must specify at least one Policy';
  const e2 = expectStatus(await c.raw('POST', V2, { body: { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'empty' }, spec: empty({ behavior: { scaleDown: { policies: [] } } }) } }), 422, 'Invalid');
  assert.equal(e2.message, `HorizontalPodAutoscaler.autoscaling "empty" is invalid: ${noPolicy}`);
  const e1 = await c.raw('POST', V1, {
    body: { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'empty', annotations: { 'autoscaling.alpha.kubernetes.io/behavior': '{"ScaleDown":{"Policies":[]}}' } }, spec: empty({}) },
  });
  assert.equal(expectStatus(e1, 422, 'Invalid').message, `HorizontalPodAutoscaler.autoscaling "empty" is invalid: ${noPolicy}`);
  const made = await c.raw('POST', V2, { body: { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'filled' }, spec: empty({ behavior: { scaleDown: {} } }) } });
  assert.equal(made.status, 201, made.text);
  assert.deepEqual(made.json().spec.behavior.scaleDown.policies, [{ type: 'Percent', value: 100, periodSeconds: 15 }]);
  const patched = await c.raw('PATCH', `${V2}/filled`, { body: { spec: { behavior: { scaleDown: { policies: [] } } } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(expectStatus(patched, 422, 'Invalid').message, `HorizontalPodAutoscaler.autoscaling "filled" is invalid: ${noPolicy}`);
  // the status: counts are not negative
  const cur = (await c.raw('GET', `${V1}/plain`)).json();
  cur.status = { currentReplicas: -1, desiredReplicas: 0 };
  const st = expectStatus(await c.raw('PUT', `${V1}/plain/status`, { body: cur }), 422, 'Invalid');
  assert.deepEqual(st.details.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be greater than or equal to 0', field: 'status.currentReplicas' }]);
});
