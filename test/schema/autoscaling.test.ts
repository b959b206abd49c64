// autoscaling/v1 <-> v2 HorizontalPodAutoscaler conversion (src/schema/autoscaling.ts): the cases
// of Kubernetes' conversion that the e2e test does not reach.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hpaV1ToV2, hpaV2ToV1, hpaV1AnnotationError, hpaAsStored, HPA_METRICS_ANNOTATION, HPA_CURRENT_METRICS_ANNOTATION, HPA_BEHAVIOR_ANNOTATION, HPA_CONDITIONS_ANNOTATION } from '../../src/schema/autoscaling.js';

const ref = { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' };
const v2 = (spec: object, status: object = {}, metadata: object = { name: 'h' }) => ({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata, spec: { scaleTargetRef: ref, maxReplicas: 4, ...spec }, status: { desiredReplicas: 0, ...status } });

test('a cpu metric with an average value (not a utilization) is no v1 target: it goes into the metrics annotation', () => {
  const out = hpaV2ToV1(v2({ metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'AverageValue', averageValue: '500m' } } }] }));
  assert.equal(out.spec.targetCPUUtilizationPercentage, undefined);
  assert.equal(out.metadata.annotations[HPA_METRICS_ANNOTATION], '[{"type":"Resource","resource":{"name":"cpu","targetAverageValue":"500m"}}]');
  // and back: the v1 object has other metrics, so no 80% default
  assert.deepEqual(hpaV1ToV2(out).spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'AverageValue', averageValue: '500m' } } }]);
});

test('object, container resource and external metrics in v1 MetricSpec form (quantities Go writes even when zero)', () => {
  const metrics = [
    { type: 'Object', object: { describedObject: { kind: 'Service', name: 's' }, metric: { name: 'rps' }, target: { type: 'AverageValue', averageValue: '10' } } },
    { type: 'ContainerResource', containerResource: { name: 'memory', container: 'app', target: { type: 'Utilization', averageUtilization: 70 } } },
    { type: 'External', external: { metric: { name: 'q' }, target: { type: 'AverageValue', averageValue: '2' } } },
  ];
  const out = hpaV2ToV1(v2({ metrics }));
  assert.equal(
    out.metadata.annotations[HPA_METRICS_ANNOTATION],
    '[{"type":"Object","object":{"target":{"kind":"Service","name":"s"},"metricName":"rps","targetValue":"0","averageValue":"10"}},' +
      '{"type":"ContainerResource","containerResource":{"name":"memory","targetAverageUtilization":70,"container":"app"}},' +
      '{"type":"External","external":{"metricName":"q","targetAverageValue":"2"}}]',
  );
  const back = hpaV1ToV2(out).spec.metrics;
  // (an Object target comes back with the value "0" Kubernetes' conversion also sets)
  assert.deepEqual(back[0].object, { describedObject: { kind: 'Service', name: 's' }, target: { type: 'AverageValue', value: '0', averageValue: '10' }, metric: { name: 'rps' } });
  assert.deepEqual(back[1], metrics[1]);
  assert.deepEqual(back[2], metrics[2]);
  // v1 never shows a cpu target here: the default applies only to a v1 object with no metric at all
  assert.equal(out.spec.targetCPUUtilizationPercentage, undefined);
  assert.equal(back.length, 3);
});

test('round-trip annotations an object carries are not kept: only those the conversion makes', () => {
  const out = hpaV2ToV1(
    v2({ metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }] }, {}, { name: 'h', annotations: { [HPA_CONDITIONS_ANNOTATION]: '[]', [HPA_BEHAVIOR_ANNOTATION]: 'x', keep: 'me' } }),
  );
  assert.deepEqual(out.metadata.annotations, { keep: 'me' });
  const none = hpaV2ToV1(v2({ metrics: [] }, {}, { name: 'h', annotations: { [HPA_METRICS_ANNOTATION]: '[]' } }));
  assert.equal(none.metadata.annotations, undefined);
});

test('the behavior annotation is read as Go reads it: keys in any case; one with no rules, or not JSON, is dropped', () => {
  const v1 = (b: string) => ({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h', annotations: { [HPA_BEHAVIOR_ANNOTATION]: b } }, spec: { scaleTargetRef: ref, maxReplicas: 3, targetCPUUtilizationPercentage: 50 } });
  const b = hpaV1ToV2(v1('{"scaleup":{"selectpolicy":"Min","POLICIES":[{"type":"Pods","value":1,"periodseconds":30}]}}'));
  assert.deepEqual(b.spec.behavior, { scaleUp: { selectPolicy: 'Min', policies: [{ type: 'Pods', value: 1, periodSeconds: 30 }] } });
  assert.equal(b.metadata.annotations, undefined);
  assert.equal(hpaV1ToV2(v1('{}')).spec.behavior, undefined);
  assert.equal(hpaV1ToV2(v1('nope')).spec.behavior, undefined);
  assert.equal(hpaV1AnnotationError(v1('nope')), undefined);
});

test('status: the last cpu utilization is v1 current figure; every metric goes into current-metrics; a condition without a time is null', () => {
  const out = hpaV2ToV1(
    v2(
      { metrics: [] },
      {
        currentReplicas: 2,
        currentMetrics: [
          { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 10 } } },
          { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 20, averageValue: '1' } } },
        ],
        conditions: [{ type: 'ScalingActive', status: 'False' }],
      },
    ),
  );
  assert.equal(out.status.currentCPUUtilizationPercentage, 20);
  assert.equal(
    out.metadata.annotations[HPA_CURRENT_METRICS_ANNOTATION],
    '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":10,"currentAverageValue":"0"}},{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":20,"currentAverageValue":"1"}}]',
  );
  assert.equal(out.metadata.annotations[HPA_CONDITIONS_ANNOTATION], '[{"type":"ScalingActive","status":"False","lastTransitionTime":null}]');
  const back = hpaV1ToV2(out);
  // (the annotation's figures replace the single CPU one; "0" comes back as an average value, as in Kubernetes)
  assert.deepEqual(back.status.currentMetrics[0], { type: 'Resource', resource: { name: 'cpu', current: { averageValue: '0', averageUtilization: 10 } } });
  // (v2's lastTransitionTime is a struct too: Go writes null for an unset one)
  assert.deepEqual(back.status.conditions, [{ type: 'ScalingActive', status: 'False', lastTransitionTime: null }]);
});

test('Go errors for annotations that do not unmarshal; the printer sees the stored order', () => {
  const v1 = (a: Record<string, string>) => ({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h', annotations: a }, spec: { scaleTargetRef: ref, maxReplicas: 3 } });
  assert.equal(hpaV1AnnotationError(v1({ [HPA_METRICS_ANNOTATION]: '[{' })), 'unexpected end of JSON input');
  assert.equal(hpaV1AnnotationError(v1({ [HPA_CURRENT_METRICS_ANNOTATION]: '"x"' })), 'json: cannot unmarshal string into Go value of type []v1.MetricStatus');
  assert.equal(hpaV1AnnotationError(v1({ [HPA_METRICS_ANNOTATION]: 'null' })), undefined);
  const stored = v2({ metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }, { type: 'Pods', pods: { metric: { name: 'p' }, target: { type: 'AverageValue', averageValue: '1' } } }] });
  const read = hpaV2ToV1(stored);
  assert.equal(hpaAsStored(read), stored);
  // (out of sight: not a key, not serialized)
  assert.deepEqual(Object.keys(read), ['kind', 'apiVersion', 'metadata', 'spec', 'status']);
  assert.equal(JSON.parse(JSON.stringify(read)).spec.metrics, undefined);
  assert.deepEqual(hpaAsStored(structuredClone(read)).spec.metrics.map((m: any) => m.type), ['Pods', 'Resource']);
});
