// A Pod's QoS class as kube-apiserver's qos.ComputePodQOS gives it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computePodQOS, getPodQOS } from '../../src/schema/qos.js';

const ctr = (requests?: object, limits?: object) => ({ name: 'c', image: 'x', resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } });

test('BestEffort: no cpu or memory anywhere (other resources and zero quantities do not count)', () => {
  assert.equal(computePodQOS({ containers: [{ name: 'c', image: 'x' }] }), 'BestEffort');
  assert.equal(computePodQOS({ containers: [ctr({ 'ephemeral-storage': '1Gi' }, { 'nvidia.com/gpu': '1' })] }), 'BestEffort');
  assert.equal(computePodQOS({ containers: [ctr({ cpu: '0', memory: '0' })] }), 'BestEffort');
  assert.equal(computePodQOS(undefined), 'BestEffort');
});

test('Guaranteed: every container limits cpu and memory and the summed requests equal the summed limits, by value', () => {
  assert.equal(computePodQOS({ containers: [ctr({ cpu: '1', memory: '1Gi' }, { cpu: '1000m', memory: '1024Mi' })] }), 'Guaranteed');
  // two containers that are Guaranteed each, and init containers count
  assert.equal(computePodQOS({ containers: [ctr({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' })], initContainers: [ctr({ cpu: '2', memory: '1Mi' }, { cpu: '2', memory: '1Mi' })] }), 'Guaranteed');
  // kube-apiserver compares the sums: these differ per container but not in total
  assert.equal(computePodQOS({ containers: [ctr({ cpu: '1', memory: '1Gi' }, { cpu: '2', memory: '1Gi' }), ctr({ cpu: '2', memory: '1Gi' }, { cpu: '1', memory: '1Gi' })] }), 'Guaranteed');
});

test('Burstable: anything else', () => {
  assert.equal(computePodQOS({ containers: [ctr({ cpu: '100m' })] }), 'Burstable');
  assert.equal(computePodQOS({ containers: [ctr({ cpu: '1', memory: '1Gi' }, { cpu: '1' })] }), 'Burstable');
  assert.equal(computePodQOS({ containers: [ctr({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '2Gi' })] }), 'Burstable');
  assert.equal(computePodQOS({ containers: [ctr({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }), ctr()] }), 'Burstable');
  // limits with no requests at all (requests are defaulted from limits before this is asked)
  assert.equal(computePodQOS({ containers: [ctr(undefined, { cpu: '1', memory: '1Gi' })] }), 'Burstable');
});

test('getPodQOS: the recorded class first', () => {
  assert.equal(getPodQOS({ spec: { containers: [ctr({ cpu: '1' })] }, status: { qosClass: 'Guaranteed' } }), 'Guaranteed');
  assert.equal(getPodQOS({ spec: { containers: [ctr({ cpu: '1' })] }, status: {} }), 'Burstable');
});
