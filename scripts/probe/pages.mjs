// Paged lists (limit and continue, with and without a label selector) while a client deletes,
// creates and patches in the same collection: every page carries the first page's
// resourceVersion, and the pages together are exactly the list at it (resourceVersionMatch=Exact),
// object for object.
import { client, consistency, random, report } from './common.mjs';

const NS = 'probe-pages';

export async function run({ port, kubeconfig, seed }) {
  const c = await client(port, kubeconfig);
  const { compareItems } = await consistency();
  const { rnd } = random(seed);
  const base = `/api/v1/namespaces/${NS}/configmaps`;
  const name = (i) => `p${String(i).padStart(4, '0')}`;
  await c.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  for (let i = 0; i < 300; i++) await c.request('POST', base, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: name(i), labels: { g: String(i % 3) } }, data: { v: '0' } } });
  let stop = false;
  const writer = (async () => {
    for (let i = 0; !stop; i++) {
      const n = name(Math.floor(rnd() * 400));
      if (i % 3 === 0) await c.request('DELETE', `${base}/${n}`);
      else if (i % 3 === 1) await c.request('POST', base, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n, labels: { g: String(i % 3) } } } });
      else await c.request('PATCH', `${base}/${n}`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { data: { v: String(i) } } });
    }
  })();
  const problems = [];
  for (let round = 0; round < 20; round++) {
    const limit = 1 + Math.floor(rnd() * 50);
    const selector = round % 2 ? '&labelSelector=g%3D1' : '';
    let token = '';
    let rv;
    const items = [];
    for (;;) {
      const r = await c.request('GET', `${base}?limit=${limit}${selector}${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
      if (r.status !== 200) {
        problems.push({ round, problem: `a page answered ${r.status}`, answer: r.text?.slice(0, 300) });
        break;
      }
      rv ??= r.json.metadata.resourceVersion;
      if (r.json.metadata.resourceVersion !== rv) problems.push({ round, problem: `a page at ${r.json.metadata.resourceVersion}, the first at ${rv}` });
      items.push(...r.json.items);
      token = r.json.metadata.continue;
      if (!token) break;
    }
    const whole = await c.request('GET', `${base}?resourceVersion=${rv}&resourceVersionMatch=Exact${selector}`);
    if (whole.status !== 200) {
      problems.push({ round, problem: `the exact list answered ${whole.status}` });
      continue;
    }
    for (const problem of compareItems(items, whole.json.items)) problems.push({ round, problem: `the pages and the exact list: ${problem}`, limit });
  }
  stop = true;
  await writer;
  c.close();
  return report('pages', { lists: 20, problems: problems.length }, problems);
}
