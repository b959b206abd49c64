// Eight clients create, replace (with and without a resourceVersion), patch (merge, strategic,
// JSON), apply (with and without force) and delete three ConfigMaps at once, while a watch records
// every event. Kubernetes makes a write that names no resourceVersion again when another lands
// first, so: a patch or an apply never answers 409 (each apply sets only its own manager's field),
// an apply never answers 404, no answer is a 5xx; and at the end each object is what the last
// event of it says.
import https from 'node:https';
import { client, random, report } from './common.mjs';

const NS = 'probe-writes';
const NAMES = ['c1', 'c2', 'c3'];

export async function run({ port, kubeconfig, seed }) {
  const c = await client(port, kubeconfig);
  const { pick } = random(seed);
  const base = `/api/v1/namespaces/${NS}/configmaps`;
  await c.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  const events = [];
  let pending = '';
  const watch = https.request({ host: '127.0.0.1', port, path: `${base}?watch=1&resourceVersion=0`, agent: new https.Agent({ ca: c.tls.ca, cert: c.tls.cert, key: c.tls.key }), servername: 'localhost' }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (d) => {
      pending += d;
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        events.push(JSON.parse(pending.slice(0, nl)));
        pending = pending.slice(nl + 1);
      }
    });
  });
  watch.end();
  await new Promise((r) => setTimeout(r, 300));
  const problems = [];
  const counts = {};
  const merge = 'application/merge-patch+json';
  const worker = async (id) => {
    for (let i = 0; i < 250; i++) {
      const n = pick(NAMES);
      const op = pick(['create', 'put', 'putrv', 'merge', 'smp', 'json', 'apply', 'applyforce', 'delete', 'get', 'list']);
      const v = `${id}-${i}`;
      const cm = (data) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n }, data });
      let r;
      if (op === 'create') r = await c.request('POST', base, { body: cm({ v }) });
      else if (op === 'put') r = await c.request('PUT', `${base}/${n}`, { body: cm({ v }) });
      else if (op === 'putrv') {
        const g = await c.request('GET', `${base}/${n}`);
        r = g.status !== 200 ? g : await c.request('PUT', `${base}/${n}`, { body: { ...g.json, data: { ...(g.json.data ?? {}), v } } });
      } else if (op === 'merge') r = await c.request('PATCH', `${base}/${n}`, { headers: { 'content-type': merge }, body: { data: { v, [`k${id}`]: v } } });
      else if (op === 'smp') r = await c.request('PATCH', `${base}/${n}`, { headers: { 'content-type': 'application/strategic-merge-patch+json' }, body: { metadata: { labels: { [`w${id}`]: `x${i}` } }, data: { v } } });
      else if (op === 'json') r = await c.request('PATCH', `${base}/${n}`, { headers: { 'content-type': 'application/json-patch+json' }, body: [{ op: 'add', path: '/data/v', value: v }] });
      else if (op === 'apply') r = await c.request('PATCH', `${base}/${n}?fieldManager=m${id}`, { headers: { 'content-type': 'application/apply-patch+yaml' }, body: cm({ [`a${id}`]: v }) });
      else if (op === 'applyforce') r = await c.request('PATCH', `${base}/${n}?fieldManager=m${id}&force=true`, { headers: { 'content-type': 'application/apply-patch+yaml' }, body: cm({ v }) });
      else if (op === 'delete') r = await c.request('DELETE', `${base}/${n}`);
      else if (op === 'get') r = await c.request('GET', `${base}/${n}`);
      else r = await c.request('GET', `${base}?limit=1`);
      counts[`${op} ${r.status}`] = (counts[`${op} ${r.status}`] ?? 0) + 1;
      const neverConflicts = ['merge', 'smp', 'json', 'apply', 'applyforce'].includes(op);
      const wrong = r.status < 0 || r.status >= 500 || (r.status >= 400 && ![404, 409].includes(r.status)) || (r.status === 409 && neverConflicts) || (r.status === 404 && op.startsWith('apply'));
      if (wrong) problems.push({ op, name: n, status: r.status, answer: r.text?.slice(0, 300) });
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, id) => worker(id)));
  await new Promise((r) => setTimeout(r, 500));
  const live = new Map(((await c.request('GET', base)).json?.items ?? []).map((o) => [o.metadata.name, o]));
  const last = new Map();
  for (const e of events) if (e.type !== 'BOOKMARK') last.set(e.object.metadata.name, e);
  for (const n of NAMES) {
    const e = last.get(n);
    const o = live.get(n);
    if (!o && e && e.type !== 'DELETED') problems.push({ name: n, problem: `gone, but its last event is ${e.type}` });
    if (o && (!e || e.type === 'DELETED')) problems.push({ name: n, problem: `there, but its last event is ${e?.type}` });
    if (o && e && e.type !== 'DELETED' && (e.object.metadata.resourceVersion !== o.metadata.resourceVersion || JSON.stringify(e.object.data) !== JSON.stringify(o.data))) {
      problems.push({ name: n, problem: `its last event is at ${e.object.metadata.resourceVersion}, the object at ${o.metadata.resourceVersion}` });
    }
  }
  watch.destroy();
  c.close();
  return report('writes', { events: events.length, answers: counts, problems: problems.length }, problems);
}
