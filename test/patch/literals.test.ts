// The literals with a fraction or an exponent that merge and JSON patches write (patch/literals.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonPatchLiterals, mergePatchLiterals, withLiterals } from '../../src/patch/literals.js';

const ops = (t: string) => jsonPatchLiterals(t, JSON.parse(t));

test('patch literals: a merge patch writes its own paths; a JSON patch its ops\' values at their pointers', () => {
  assert.deepEqual([...(mergePatchLiterals('{"spec":{"replicas":3.0,"x":"3.0"}}') ?? [])], [['spec.replicas', '3.0']]);
  assert.equal(mergePatchLiterals('{"spec":{"replicas":3}}'), null);
  // a member written twice: the last one's value counts, with its literals
  assert.equal(mergePatchLiterals('{"spec":{"replicas":3.0,"replicas":2}}')?.size ?? 0, 0);
  assert.deepEqual([...(mergePatchLiterals('{"spec":{"replicas":2,"replicas":3.0}}') ?? [])], [['spec.replicas', '3.0']]);
  assert.deepEqual([...(mergePatchLiterals('{"a":{"b":1.5,"c":[2e0]},"a":{"d":1},"x":4.0}') ?? [])], [['x', '4.0']]);
  assert.deepEqual([...(mergePatchLiterals('{"a":{"b":1.5},"ab":1}') ?? [])], [['a.b', '1.5']]);
  assert.deepEqual([...(ops('[{"op":"add","path":"/metadata/annotations/a~1b","value":{"n":1e0}},{"op":"replace","path":"/spec/ports/1/port","value":8.0}]') ?? [])], [
    ['metadata.annotations.a/b.n', '1e0'],
    ['spec.ports[1].port', '8.0'],
  ]);
  // replaced, removed, moved or shifted away: forgotten
  assert.equal(ops('[{"op":"replace","path":"/spec/replicas","value":2e0},{"op":"replace","path":"/spec/replicas","value":2}]'), null);
  assert.equal(ops('[{"op":"replace","path":"/spec/ports/0/port","value":2e0},{"op":"remove","path":"/spec/ports/0"}]'), null);
  assert.equal(ops('[{"op":"replace","path":"/spec/ports/0/port","value":2e0},{"op":"add","path":"/spec/ports/0","value":{"port":1}}]'), null);
  assert.equal(ops('[{"op":"add","path":"/spec/ports/-","value":{"port":2e0}}]'), null);
  assert.equal(ops('{"op":"add"}'), null);
  // a value put at the whole document: its members' paths as the result has them
  assert.deepEqual([...(ops('[{"op":"replace","path":"","value":{"spec":{"replicas":3.0}}}]') ?? [])], [['spec.replicas', '3.0']]);
});

test('patch literals: the patched JSON with the literals in their places', () => {
  const lits = new Map([
    ['spec.replicas', '3.0'],
    ['spec.ports[0].port', '8e1'],
    ['spec.gone', '1.0'],
  ]);
  const v = { spec: { replicas: 3, ports: [{ port: 80, name: 'x' }], s: '3' } };
  assert.equal(withLiterals(v, lits, (x) => JSON.stringify(x)), '{"spec":{"replicas":3.0,"ports":[{"port":8e1,"name":"x"}],"s":"3"}}');
  assert.deepEqual(v.spec.replicas, 3, 'the object itself is unchanged');
  assert.equal(withLiterals(v, null, (x) => JSON.stringify(x)), JSON.stringify(v));
});
