// Six clients create (with and without a finalizer), delete (plain, with odd DeleteOptions, as a
// dry run, by collection), add and remove finalizers on four ConfigMaps and four Pods at once. No
// answer may be a 5xx, an error in JSON must be a Status; at the end, with the finalizers
// removed and everything deleted, nothing may be left.
import { client, random, report } from './common.mjs';

export async function run({ port, kubeconfig, seed }) {
  const c = await client(port, kubeconfig);
  const { rnd, pick } = random(seed);
  const NS = 'probe-deletes';
  await c.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  const base = `/api/v1/namespaces/${NS}/configmaps`;
  const pods = `/api/v1/namespaces/${NS}/pods`;
  const problems = []; const counts = {};
  const ODD = [undefined, 0, 1, -1, 30, 'x', null, 1e10];
  const worker = async (id) => {
    for (let i = 0; i < 200; i++) {
      const n = `d${Math.floor(rnd() * 4)}`;
      const isPod = rnd() < 0.3;
      const coll = isPod ? pods : base;
      const op = pick(['create', 'createfin', 'delete', 'deleteopts', 'dry', 'rmfin', 'collection', 'get', 'patchfin']);
      let r;
      const obj = isPod ? { apiVersion: 'v1', kind: 'Pod', metadata: { name: n }, spec: { containers: [{ name: 'c', image: 'x' }] } } : { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n } };
      if (op === 'create') r = await c.request('POST', coll, { body: obj });
      else if (op === 'createfin') r = await c.request('POST', coll, { body: { ...obj, metadata: { ...obj.metadata, finalizers: ['example.com/hold'] } } });
      else if (op === 'delete') r = await c.request('DELETE', `${coll}/${n}`);
      else if (op === 'deleteopts') r = await c.request('DELETE', `${coll}/${n}`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: pick(ODD), propagationPolicy: pick(['Foreground', 'Background', 'Orphan', 'Bogus', undefined]), preconditions: rnd() < 0.3 ? { uid: pick(['x', undefined]), resourceVersion: pick(['1', undefined]) } : undefined } });
      else if (op === 'dry') r = await c.request('DELETE', `${coll}/${n}?dryRun=All`);
      else if (op === 'rmfin') r = await c.request('PATCH', `${coll}/${n}`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { metadata: { finalizers: null } } });
      else if (op === 'patchfin') r = await c.request('PATCH', `${coll}/${n}`, { headers: { 'content-type': 'application/json-patch+json' }, body: [{ op: 'add', path: '/metadata/finalizers', value: ['example.com/hold'] }] });
      else if (op === 'collection') r = await c.request('DELETE', `${coll}?labelSelector=${encodeURIComponent(pick(['', 'a=b', '!x']))}${rnd() < 0.5 ? '&gracePeriodSeconds=0' : ''}`);
      else r = await c.request('GET', `${coll}/${n}`);
      counts[`${op} ${r.status}`] = (counts[`${op} ${r.status}`] ?? 0) + 1;
      if (r.status < 0 || r.status >= 500 || (r.status >= 400 && String(r.type).includes('json') && !/"kind":\s*"Status"/.test(r.text))) problems.push({ op, status: r.status, answer: r.text?.slice(0, 300) });
    }
  };
  await Promise.all(Array.from({ length: 6 }, (_, i) => worker(i)));
  // end: remove finalizers, delete everything; all must go
  for (const coll of [base, pods]) {
    const l = await c.request('GET', coll);
    for (const o of l.json?.items ?? []) { await c.request('PATCH', `${coll}/${o.metadata.name}`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { metadata: { finalizers: null } } }); await c.request('DELETE', `${coll}/${o.metadata.name}?gracePeriodSeconds=0`); }
  }
  await new Promise((r) => setTimeout(r, 1000));
  const left = [...((await c.request('GET', base)).json?.items ?? []), ...((await c.request('GET', pods)).json?.items ?? [])].map((o) => `${o.kind}/${o.metadata.name}:${o.metadata.deletionTimestamp ? 'terminating' : 'live'}:${JSON.stringify(o.metadata.finalizers ?? [])}`);
  c.close();
  for (const o of left.filter((x) => !x.startsWith('ConfigMap/kube-root-ca.crt:'))) problems.push({ problem: `${o} left` });
  return report('deletes', { answers: counts, problems: problems.length }, problems);
}
