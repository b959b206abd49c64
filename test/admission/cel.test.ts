// The CEL subset of webhook matchConditions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateCEL, evaluateMatchConditions } from '../../src/apiserver/admission/cel.js';
import { attrs, pod } from './fake.js';

const obj = { metadata: { name: 'web', labels: { app: 'web', tier: 'front' } }, spec: { replicas: 3, containers: [{ name: 'a', image: 'nginx:1' }, { name: 'b', image: 'envoy' }] } };

test('CEL: literals, operators, selection, has()', () => {
  const e = (x: string) => evaluateCEL(x, { object: obj, request: { operation: 'CREATE', userInfo: { username: 'alice', groups: ['dev'] } } });
  assert.equal(e('1 + 2 * 3'), 7);
  assert.equal(e('7 / 2'), 3);
  assert.equal(e('7.0 / 2.0'), 3.5);
  assert.equal(e('"a" + "b" == "ab"'), true);
  assert.equal(e('object.spec.replicas > 2 && object.metadata.name == "web"'), true);
  assert.equal(e("has(object.metadata.labels) && 'app' in object.metadata.labels"), true);
  assert.equal(e('has(object.metadata.annotations)'), false);
  assert.equal(e('object.metadata.labels["tier"]'), 'front');
  assert.equal(e('request.operation in ["CREATE", "UPDATE"]'), true);
  assert.equal(e("!('system:masters' in request.userInfo.groups)"), true);
  assert.equal(e('object.spec.replicas == 3.0'), true);
  assert.equal(e('size(object.spec.containers) == 2 && object.spec.containers.size() == 2'), true);
  assert.equal(e('true ? 1 : 2'), 1);
  assert.equal(e('{"a": 1}["a"]'), 1);
  assert.equal(e('[1, 2] + [3] == [1, 2, 3]'), true);
});

test('CEL: macros and string functions', () => {
  const e = (x: string) => evaluateCEL(x, { object: obj });
  assert.equal(e('object.spec.containers.all(c, c.image.contains(":"))'), false);
  assert.equal(e('object.spec.containers.exists(c, c.image.startsWith("nginx"))'), true);
  assert.equal(e('object.spec.containers.exists_one(c, c.name == "b")'), true);
  assert.deepEqual(e('object.spec.containers.map(c, c.name)'), ['a', 'b']);
  assert.deepEqual(e('object.spec.containers.filter(c, c.name != "a").map(c, c.image)'), ['envoy']);
  assert.equal(e('object.metadata.labels.all(k, k.matches("^[a-z]+$"))'), true);
  assert.equal(e('"Web".lowerAscii() == "web" && "a,b".split(",").size() == 2'), true);
  assert.equal(e('string(1) + "x"'), '1x');
});

test('CEL: errors — missing keys, && and || over errors, syntax', () => {
  const e = (x: string) => evaluateCEL(x, { object: obj });
  assert.throws(() => e('object.metadata.annotations.x'), /no such key: annotations/);
  assert.equal(e('object.metadata.annotations.x == "y" || true'), true);
  assert.equal(e('false && object.metadata.annotations.x == "y"'), false);
  assert.throws(() => e('object.spec.replicas +'), /Syntax error/);
  assert.throws(() => e('authorizer.group("").check("x")'), /undeclared reference to 'authorizer'/);
  assert.throws(() => e('1 + "a"'), /no such overload/);
});

test('matchConditions: all true matches; a false one skips even with errors; errors alone are reported', () => {
  const a = attrs('pods', 'CREATE', { object: pod('web', 'apps', {}, { labels: { app: 'web' } }), user: { name: 'system:serviceaccount:kube-system:x', groups: [] } });
  assert.deepEqual(evaluateMatchConditions([{ name: 'labeled', expression: "has(object.metadata.labels) && object.metadata.labels.app == 'web'" }], a), { matches: true });
  assert.deepEqual(
    evaluateMatchConditions(
      [
        { name: 'broken', expression: 'object.nope.x' },
        { name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" },
      ],
      a,
    ),
    { matches: false, failedCondition: 'not-system' },
  );
  assert.deepEqual(evaluateMatchConditions([{ name: 'broken', expression: 'object.nope.x' }], a), { matches: false, error: "expression 'object.nope.x' resulted in error: no such key: nope" });
  assert.equal(evaluateMatchConditions([{ name: 'ns', expression: "request.namespace == 'apps' && request.resource.resource == 'pods' && oldObject == null" }], a).matches, true);
});
