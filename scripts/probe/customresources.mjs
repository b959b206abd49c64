// A custom resource with a rich schema (bounds, enums, int-or-string, set and map lists,
// preserved unknown fields, a pattern, a CEL rule, status and scale subresources, printer
// columns), its objects mutated and sent by every write (create, Strict create, replace, status,
// scale, merge and JSON patches, apply; a strategic merge patch is 415 for custom resources), then
// listed in every form. No answer may be a 5xx, an error in JSON must be a Status.
import { client, random, report } from './common.mjs';

export async function run({ port, kubeconfig, seed, count = 800 }) {
  const c = await client(port, kubeconfig);
  const { rnd, pick } = random(seed);
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.probe.example.com' },
    spec: { group: 'probe.example.com', scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
        additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }, { name: 'Mode', type: 'string', jsonPath: '.spec.mode' }],
        schema: { openAPIV3Schema: { type: 'object', properties: {
          spec: { type: 'object', required: ['size'], properties: {
            size: { type: 'integer', minimum: 0, maximum: 100 }, replicas: { type: 'integer' }, mode: { type: 'string', enum: ['a', 'b'] },
            port: { 'x-kubernetes-int-or-string': true }, tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
            items: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, v: { type: 'integer' } } } },
            free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, labels: { type: 'object', additionalProperties: { type: 'string' } },
            nested: { type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'string', pattern: '^x' } } } } },
            rule: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self < 50', message: 'rule under 50' }] },
          } },
          status: { type: 'object', properties: { replicas: { type: 'integer' }, conditions: { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, status: { type: 'string' } } } } } },
        } } } }] },
  };
  const made = await c.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
  if (made.status !== 201) return report('customresources', { crd: made.status }, [{ problem: `the CRD: ${made.status} ${made.text?.slice(0, 300)}` }]);
  // served once Established
  for (let i = 0; i < 100 && (await c.request('GET', '/apis/probe.example.com/v1')).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
  const base = '/apis/probe.example.com/v1/namespaces/default/widgets';
  const good = (name) => ({ apiVersion: 'probe.example.com/v1', kind: 'Widget', metadata: { name }, spec: { size: 3, replicas: 1, mode: 'a', port: 80, tags: ['x', 'y'], items: [{ name: 'i1', v: 1 }], free: { any: { thing: [1, 'two'] } }, labels: { a: 'b' }, nested: { a: { b: 'xy' } }, rule: 10 } });
  const VALUES = [0, -1, 101, 1.5, 1e300, '', 'x', 'a', 'b', 'ü', true, null, [], {}, [null], [{}], { name: 'i1' }, [{ name: 'i1' }, { name: 'i1' }], ['x', 'x'], '80', 'http', 2 ** 63];
  function paths(o, p = [], out = []) { out.push(p); if (o && typeof o === 'object') for (const k of Object.keys(o)) paths(o[k], [...p, k], out); return out; }
  function mutate(o) { const m = structuredClone(o); for (let i = 1 + Math.floor(rnd() * 3); i > 0; i--) { const ps = paths(m).filter((p) => p.length); const p = pick(ps); let par = m; for (const k of p.slice(0, -1)) par = par[k]; const last = p[p.length - 1]; const r = rnd(); if (r < 0.2 && !Array.isArray(par)) delete par[last]; else if (r < 0.3 && !Array.isArray(par)) par[`${last}X`] = pick(VALUES); else par[last] = structuredClone(pick(VALUES)); } return m; }
  const problems = []; const counts = {};
  for (let i = 0; i < count; i++) {
    const name = `w${i % 6}`;
    if (rnd() < 0.3) await c.request('POST', base, { body: good(name) });
    const m = mutate(good(name));
    if (rnd() < 0.5) m.metadata = { name };
    const op = pick(['create', 'update', 'merge', 'apply', 'jsonpatch', 'status', 'scale', 'strict', 'smp']);
    let method = 'POST', path = base, type = 'application/json', body = JSON.stringify(m);
    if (op === 'strict') path += '?fieldValidation=Strict';
    if (op === 'update' || op === 'status') [method, path] = ['PUT', `${base}/${name}${op === 'status' ? '/status' : ''}`];
    if (op === 'scale') [method, path, body] = ['PUT', `${base}/${name}/scale`, JSON.stringify({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name }, spec: { replicas: pick(VALUES) } })];
    if (op === 'merge' || op === 'smp') [method, path, type] = ['PATCH', `${base}/${name}`, op === 'merge' ? 'application/merge-patch+json' : 'application/strategic-merge-patch+json'];
    if (op === 'apply') [method, path, type] = ['PATCH', `${base}/${name}?fieldManager=p&force=true`, 'application/apply-patch+yaml'];
    if (op === 'jsonpatch') { [method, path, type] = ['PATCH', `${base}/${name}`, 'application/json-patch+json']; const t = '/' + pick(paths(good(name)).filter((p) => p.length)).join('/'); body = JSON.stringify([{ op: pick(['add', 'replace', 'remove', 'test']), path: t, value: pick(VALUES) }]); }
    const accept = pick(['application/json', 'application/yaml', 'application/json;as=Table;v=v1;g=meta.k8s.io', 'application/cbor', 'application/vnd.kubernetes.protobuf']);
    const out = await c.request(method, path, { headers: { 'content-type': type, accept }, body });
    counts[`${op} ${out.status}`] = (counts[`${op} ${out.status}`] ?? 0) + 1;
    if (out.status < 0 || out.status >= 500 || (out.status >= 400 && String(out.type).includes('json') && !/"kind":\s*"Status"/.test(out.text))) problems.push({ op, method, path, status: out.status, body: body.slice(0, 300), answer: out.text?.slice(0, 300) });
  }
  // list in every form
  for (const accept of ['application/json', 'application/yaml', 'application/json;as=Table;v=v1;g=meta.k8s.io', 'application/vnd.kubernetes.protobuf', 'application/cbor']) { const l = await c.request('GET', base, { headers: { accept } }); if (l.status !== 200 && l.status !== 406) problems.push({ op: 'list', accept, status: l.status, answer: l.text?.slice(0, 200) }); }
  c.close();
  return report('customresources', { answers: counts, problems: problems.length }, problems);
}
