// Thirty watches of one collection (all of it, by label, by name, by a negated label; from now, from
// resourceVersion 0, from a given resourceVersion, as streaming lists with bookmarks) while a client
// patches, relabels, deletes and creates in it, and a few watches are cut off midway. Each stream,
// replayed, must end in the live state it selects, its events after the initial state in
// resourceVersion order, every line JSON, no ERROR event.
import https from 'node:https';
import { client, consistency, random, report } from './common.mjs';

export async function run({ port, kubeconfig, seed }) {
  const c = await client(port, kubeconfig);
  const { compareItems, compareKeys, isInitialEnd, orderProblems } = await consistency();
  const { rnd, pick } = random(seed);
  const NS = 'probe-watches';
  await c.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  const base = `/api/v1/namespaces/${NS}/configmaps`;
  for (let i = 0; i < 20; i++) await c.request('POST', base, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w${i}`, labels: { g: String(i % 3) } }, data: { v: '0' } } });
  const start = Number((await c.request('GET', base)).json.metadata.resourceVersion);
  const problems = [];
  const watchers = [];
  for (let k = 0; k < 30; k++) {
    const q = ['watch=1'];
    const sel = pick(['', 'labelSelector=g%3D1', 'fieldSelector=metadata.name%3Dw3', 'labelSelector=g%21%3D2']);
    if (sel) q.push(sel);
    const mode = pick(['now', 'zero', 'rv', 'sie']);
    if (mode === 'zero') q.push('resourceVersion=0');
    if (mode === 'rv') q.push(`resourceVersion=${start}`);
    if (mode === 'sie') q.push('sendInitialEvents=true', 'resourceVersionMatch=NotOlderThan', 'allowWatchBookmarks=true');
    if (rnd() < 0.5) q.push('allowWatchBookmarks=true');
    const path = `${base}?${q.join('&')}`;
    const w = { path, events: [], buf: '', ended: false, mode, sel };
    w.req = https.request({ host: '127.0.0.1', port, path, agent: new https.Agent({ ca: c.tls.ca, cert: c.tls.cert, key: c.tls.key }), servername: 'localhost' }, (res) => {
      w.status = res.statusCode;
      res.setEncoding('utf8');
      res.on('data', (d) => { w.buf += d; for (let nl = w.buf.indexOf('\n'); nl >= 0; nl = w.buf.indexOf('\n')) { try { w.events.push(JSON.parse(w.buf.slice(0, nl))); } catch (e) { problems.push({ path, problem: 'a line that is not JSON', line: w.buf.slice(0, nl).slice(0, 200) }); } w.buf = w.buf.slice(nl + 1); } });
      res.on('end', () => (w.ended = true));
    });
    w.req.on('error', () => {});
    w.req.end();
    watchers.push(w);
  }
  await new Promise((r) => setTimeout(r, 500));
  // writes; some watchers cut off midway
  for (let i = 0; i < 300; i++) {
    const n = `w${Math.floor(rnd() * 25)}`;
    const op = pick(['patch', 'patch', 'delete', 'create', 'relabel']);
    if (op === 'patch') await c.request('PATCH', `${base}/${n}`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { data: { v: String(i) } } });
    else if (op === 'relabel') await c.request('PATCH', `${base}/${n}`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { metadata: { labels: { g: String(Math.floor(rnd() * 3)) } } } });
    else if (op === 'delete') await c.request('DELETE', `${base}/${n}`);
    else await c.request('POST', base, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n, labels: { g: String(i % 3) } } } });
    if (i === 150) for (const w of watchers.slice(0, 5)) w.req.destroy();
  }
  await new Promise((r) => setTimeout(r, 1000));
  const live = new Map(((await c.request('GET', base)).json?.items ?? []).map((o) => [o.metadata.name, o]));
  const selMatch = (sel, o) => sel === '' ? true : sel === 'labelSelector=g%3D1' ? o.metadata.labels?.g === '1' : sel === 'fieldSelector=metadata.name%3Dw3' ? o.metadata.name === 'w3' : o.metadata.labels?.g !== '2';
  for (const w of watchers.slice(5)) {
    if (w.status !== 200) { problems.push({ path: w.path, problem: `status ${w.status}` }); continue; }
    // in order after the initial state (known when the initial-events-end bookmark says where it ends; none from a resourceVersion)
    const end = w.events.findIndex(isInitialEnd);
    const initial = w.mode === 'rv' ? 0 : end >= 0 ? w.events.slice(0, end).filter((e) => e.type !== 'BOOKMARK').length : undefined;
    if (initial !== undefined) for (const problem of orderProblems(w.events, initial)) problems.push({ path: w.path, problem });
    else for (const e of w.events) if (e.type === 'ERROR') problems.push({ path: w.path, problem: 'ERROR event', e: JSON.stringify(e).slice(0, 200) });
    // replay the stream into a state: it must equal the live objects that match the selector
    const state = new Map();
    for (const e of w.events) {
      if (e.type === 'ERROR' || e.type === 'BOOKMARK') continue;
      if (e.type === 'DELETED') state.delete(e.object.metadata.name); else state.set(e.object.metadata.name, e.object);
    }
    const want = [...live.values()].filter((o) => selMatch(w.sel, o));
    const got = [...state.values()].sort((a, b) => compareKeys(a.metadata.name, b.metadata.name));
    // a watch from a resourceVersion knows only what changed after it
    if (w.mode === 'rv') {
      const key = (o) => `${o.metadata.name}@${o.metadata.resourceVersion}`;
      const bm = got.filter((o) => !want.some((x) => key(x) === key(o))); const wm = want.filter((o) => !got.some((x) => key(x) === key(o)) && Number(o.metadata.resourceVersion) > start);
      if (bm.length || wm.length) problems.push({ path: w.path, problem: 'rv stream mismatch', extra: bm.map(key).slice(0, 5), missing: wm.map(key).slice(0, 5) });
    } else for (const problem of compareItems(got, want)) problems.push({ path: w.path, problem: `the stream does not end in the live state: ${problem}` });
  }
  for (const w of watchers) w.req.destroy();
  c.close();
  return report('watches', { watchers: watchers.length, events: watchers.reduce((n, w) => n + w.events.length, 0), problems: problems.length }, problems);
}
