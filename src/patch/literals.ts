// Number literals with a fraction or an exponent (`1.0`, `3e0`) that a merge patch or a JSON patch
// puts into the patched object, by the path they end up at.
//
// Kubernetes applies these two patch types to JSON text and keeps each value's literal as it was
// sent (evanphx/json-patch holds values as raw JSON), then decodes the result into the kind's Go
// type: `{"spec":{"replicas":3.0}}` is refused there ("cannot unmarshal number 3.0 into Go struct
// field DeploymentSpec.spec.replicas of type int32"). Here a patch is applied to decoded values, in
// which 3.0 is 3, so normalize is given these literals to decide as Go does. A strategic merge
// patch decodes its values into Go's interface{} (a float64 that is written back as 3), and takes
// 3.0: no literals for it.

import { forgetUnder, fractionalLiterals, underPath } from '../codec/int64.js';

/**
 * the literals a merge patch's text puts into the result (its paths are the result's); of a
 * member written twice, the last one's (Kubernetes decodes the patch into a map)
 */
export function mergePatchLiterals(text: string): Map<string, string> | null {
  return fractionalLiterals(text, true);
}

/**
 * The literals a JSON patch's text puts into the result: each add or replace op's value's, at its
 * path. An op that removes, moves or shifts values (remove, move, copy, an add into an array)
 * forgets the literals under the container it changes, so that none is taken for a value that
 * has moved (a literal forgotten is a 3.0 taken as 3, never a refusal of a value the patch did not
 * write).
 */
export function jsonPatchLiterals(text: string, ops: unknown): Map<string, string> | null {
  const all = fractionalLiterals(text);
  if (all === null || !Array.isArray(ops)) return null;
  const out = new Map<string, string>();
  ops.forEach((op: any, i) => {
    if (op === null || typeof op !== 'object' || typeof op.path !== 'string') return;
    const target = pointerPath(op.path);
    if (target === undefined) return;
    const parent = parentOf(target);
    switch (op.op) {
      case 'add':
      case 'replace': {
        const appended = op.path.endsWith('/-');
        forgetUnder(out, appended || (op.op === 'add' && /\[\d+\]$/.test(target)) ? parent : target);
        if (appended) return;
        const from = `[${i}].value`;
        // (a value put at the root: its members' paths start without a dot)
        for (const [k, lit] of all) if (underPath(k, from)) out.set(target === '' ? k.slice(from.length).replace(/^\./, '') : target + k.slice(from.length), lit);
        return;
      }
      case 'remove':
      case 'move':
      case 'copy':
        forgetUnder(out, parent);
        if (typeof op.from === 'string') {
          const f = pointerPath(op.from);
          if (f !== undefined) forgetUnder(out, parentOf(f));
        }
        return;
    }
  });
  return out.size > 0 ? out : null;
}

/** an RFC 6901 pointer as a path of fractionalLiterals' form (`/spec/ports/0/port` is `spec.ports[0].port`); `-` as `[-]` */
function pointerPath(pointer: string): string | undefined {
  if (pointer === '') return '';
  if (!pointer.startsWith('/')) return undefined;
  let path = '';
  for (const raw of pointer.slice(1).split('/')) {
    const t = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    path += /^(\d+|-)$/.test(t) ? `[${t}]` : path === '' ? t : `.${t}`;
  }
  return path;
}

/** the path of the container holding `path`'s last step */
function parentOf(path: string): string {
  return path.replace(/(\.[^.[]*|\[\d+\])$/, '');
}


/**
 * A patched object's JSON with these literals in their places (Kubernetes' 422 for a patched
 * object that does not decode carries the patched JSON text, literals as they were sent).
 * `write` writes a value's JSON; a literal whose path is no longer in the value is left out.
 */
export function withLiterals(v: unknown, literals: Map<string, string> | null, write: (v: unknown) => string): string {
  if (literals === null || v === null || typeof v !== 'object') return write(v);
  const copy = structuredClone(v) as any;
  const mark = `\u0003keelson-literal-${Math.random().toString(36).slice(2)}-`;
  const put: string[] = [];
  for (const [path, lit] of literals) {
    const steps = [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]!));
    let cur = copy;
    for (let i = 0; i < steps.length - 1 && cur !== null && typeof cur === 'object'; i++) cur = cur[steps[i]!];
    const last = steps[steps.length - 1];
    if (last === undefined || cur === null || typeof cur !== 'object' || typeof cur[last] !== 'number') continue;
    cur[last] = mark + put.length;
    put.push(lit);
  }
  const json = write(copy);
  if (put.length === 0) return json;
  const quoted = JSON.stringify(mark).slice(1, -1);
  return json.replace(new RegExp(`"${quoted.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')}(\\d+)"`, 'g'), (_m, i: string) => put[Number(i)]!);
}
