// An object of every built-in kind, mutated (a value replaced by one of the wrong type, a field
// removed or added, a list grown), sent by every write: create (Warn and Strict), replace, status,
// merge, strategic and JSON patches, server-side apply, dry runs. No answer may be a 5xx, an
// error in JSON must be a Status, every request must be answered.
import { client, everyKind, random, report } from './common.mjs';

const VALUES = [0, -1, 1, 1.5, 1e300, 2 ** 63, -(2 ** 63), '', 'x', 'A'.repeat(70), 'ü', true, false, null, [], {}, [null], [{}], { a: null }, '2020-01-01T00:00:00Z', 'not-a-time', '1Gi', '-1', '0.5', 'Always', '*', '::1', '10.0.0.1', '999.1.1.1', '80', 'http', [1, 2], { '': 1 }, { 'a/b/c': 'x' }, '\u0000', 'a\nb'];
const NS = 'probe-objects';

function paths(o, p = [], out = []) {
  out.push(p);
  if (o && typeof o === 'object') for (const k of Object.keys(o)) paths(o[k], [...p, k], out);
  return out;
}

export async function run({ port, kubeconfig, seed, count = 1500 }) {
  const c = await client(port, kubeconfig);
  const { rnd, pick } = random(seed);
  const mutate = (o) => {
    const m = structuredClone(o);
    for (let i = 1 + Math.floor(rnd() * 3); i > 0; i--) {
      const ps = paths(m).filter((p) => p.length > 0);
      if (!ps.length) break;
      const p = pick(ps);
      let parent = m;
      for (const k of p.slice(0, -1)) parent = parent[k];
      const last = p[p.length - 1];
      const r = rnd();
      if (r < 0.2 && !Array.isArray(parent)) delete parent[last];
      else if (r < 0.3 && !Array.isArray(parent)) parent[`${last}X`] = pick(VALUES);
      else if (r < 0.4 && Array.isArray(parent[last])) parent[last].push(structuredClone(parent[last][0] ?? pick(VALUES)));
      else parent[last] = structuredClone(pick(VALUES));
    }
    return m;
  };
  await c.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  const kinds = await everyKind(NS);
  const problems = [];
  for (let i = 0; i < count; i++) {
    const { obj, collection } = pick(kinds);
    const name = `${obj.metadata.name}-${i % 7}`;
    const good = structuredClone(obj);
    good.metadata.name = name;
    if (rnd() < 0.3) await c.request('POST', collection, { body: good });
    const m = mutate(good);
    if (rnd() < 0.5) m.metadata = { ...(m.metadata && typeof m.metadata === 'object' ? m.metadata : {}), name };
    const op = pick(['create', 'update', 'merge', 'strategic', 'apply', 'jsonpatch', 'status', 'createStrict', 'dry']);
    let method = 'POST';
    let path = collection;
    let type = 'application/json';
    let body = JSON.stringify(m);
    const query = [];
    if (op === 'createStrict') query.push('fieldValidation=Strict');
    if (op === 'dry') query.push('dryRun=All');
    if (op === 'update' || op === 'status') [method, path] = ['PUT', `${collection}/${name}${op === 'status' ? '/status' : ''}`];
    if (op === 'merge' || op === 'strategic') {
      [method, path, type] = ['PATCH', `${collection}/${name}`, `application/${op === 'merge' ? 'merge' : 'strategic-merge'}-patch+json`];
      if (rnd() < 0.5) body = JSON.stringify({ ...m, apiVersion: undefined, kind: undefined });
    }
    if (op === 'apply') {
      [method, path, type] = ['PATCH', `${collection}/${name}`, 'application/apply-patch+yaml'];
      query.push(`fieldManager=probe${rnd() < 0.5 ? '&force=true' : ''}`);
    }
    if (op === 'jsonpatch') {
      [method, path, type] = ['PATCH', `${collection}/${name}`, 'application/json-patch+json'];
      const target = `/${pick(paths(good).filter((p) => p.length)).map((k) => String(k).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
      body = JSON.stringify([{ op: pick(['add', 'replace', 'remove', 'test', 'copy', 'move']), path: target, from: '/metadata/labels', value: pick(VALUES) }]);
    }
    if (query.length) path += `?${query.join('&')}`;
    const accept = pick(['application/json', 'application/vnd.kubernetes.protobuf', 'application/yaml', 'application/json;as=Table;v=v1;g=meta.k8s.io']);
    const out = await c.request(method, path, { headers: { 'content-type': type, accept }, body });
    let problem;
    if (out.status < 0) problem = 'no answer';
    else if (out.status >= 500) problem = '5xx';
    else if (out.status >= 400 && String(out.type).includes('json') && !/"kind":\s*"Status"/.test(out.text)) problem = 'an error that is not a Status';
    if (problem) problems.push({ problem, op, method, path, status: out.status, body: body.slice(0, 400), answer: out.text?.slice(0, 400) });
  }
  c.close();
  return report('objects', { writes: count, problems: problems.length }, problems);
}
