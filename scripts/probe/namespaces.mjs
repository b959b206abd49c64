// Namespaces deleted while forty ConfigMaps are being created in each: every namespace goes,
// and no object is left behind in one.
import { client, report } from './common.mjs';

export async function run({ port, kubeconfig }) {
  const c = await client(port, kubeconfig);
  const answers = {};
  for (let round = 0; round < 8; round++) {
    const ns = `probe-ns-${round}`;
    await c.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    const work = [];
    for (let i = 0; i < 40; i++) {
      if (i === 10) work.push(c.request('DELETE', `/api/v1/namespaces/${ns}`));
      work.push(c.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm${i}` } } }).then((r) => (answers[r.status] = (answers[r.status] ?? 0) + 1)));
    }
    await Promise.all(work);
  }
  const t0 = Date.now();
  let left = [];
  for (;;) {
    left = ((await c.request('GET', '/api/v1/namespaces')).json?.items ?? []).filter((n) => n.metadata.name.startsWith('probe-ns-')).map((n) => n.metadata.name);
    if (!left.length || Date.now() - t0 > 30_000) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const orphans = ((await c.request('GET', '/api/v1/configmaps')).json?.items ?? []).filter((o) => o.metadata.namespace.startsWith('probe-ns-')).map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
  c.close();
  const problems = [...left.map((n) => ({ problem: `namespace ${n} still there after 30 s` })), ...orphans.map((o) => ({ problem: `${o} left behind` }))];
  return report('namespaces', { creates: answers, problems: problems.length }, problems);
}
