// The subresources with bodies of their own: scale (PUT and every patch type) of a Deployment and a
// StatefulSet, pods/binding and bindings, pods/eviction, serviceaccounts/token, pods/ephemeralcontainers,
// pods/resize (PUT and every patch type) and pods/status, with values of the wrong type. No answer may be a 5xx, an error in JSON must be a Status.
import { client, random, report } from './common.mjs';

export async function run({ port, kubeconfig, seed, count = 600 }) {
  const c = await client(port, kubeconfig);
  const { rnd, pick } = random(seed);
  const NS = 'probe-sub';
  await c.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  const tpl = { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'x' }] } };
  await c.request('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, { body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 1, selector: { matchLabels: { app: 'x' } }, template: tpl } } });
  await c.request('POST', `/apis/apps/v1/namespaces/${NS}/statefulsets`, { body: { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 's' }, spec: { replicas: 1, serviceName: 's', selector: { matchLabels: { app: 'x' } }, template: tpl } } });
  await c.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa' } } });
  await c.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } } });
  const V = [0, -1, 2, 1e9, 'x', null, [], {}, true, '3', 1.5];
  const Q = ['100m', '1', '64Mi', '0', '-1', 'x', 1, null, {}, '1e3', '1.5Gi'];
  /** resource requirements, sometimes of the wrong shape */
  const resources = () => pick([{ requests: { cpu: pick(Q) } }, { limits: { memory: pick(Q) } }, { requests: { cpu: pick(Q), memory: pick(Q) }, limits: { cpu: pick(Q), memory: pick(Q) } }, { limits: { 'ephemeral-storage': pick(Q) } }, {}, null, 'x', { requests: 'x' }]);
  const problems = []; const counts = {};
  for (let i = 0; i < count; i++) {
    const p = `p${i % 5}`;
    if (rnd() < 0.3) await c.request('POST', `/api/v1/namespaces/${NS}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: p }, spec: { containers: [{ name: 'c', image: 'x' }] } } });
    const op = pick(['scaleD', 'scaleS', 'scalePatch', 'binding', 'eviction', 'token', 'ephemeral', 'resize', 'resizePatch', 'statusPod', 'podsBindingBad']);
    let r;
    if (op === 'scaleD' || op === 'scaleS') r = await c.request('PUT', `/apis/apps/v1/namespaces/${NS}/${op === 'scaleD' ? 'deployments/d' : 'statefulsets/s'}/scale`, { body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: op === 'scaleD' ? 'd' : 's', resourceVersion: pick([undefined, '1', 'x']) }, spec: { replicas: pick(V) } } });
    else if (op === 'scalePatch') r = await c.request('PATCH', `/apis/apps/v1/namespaces/${NS}/deployments/d/scale`, { headers: { 'content-type': pick(['application/merge-patch+json', 'application/json-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml']) }, body: pick([{ spec: { replicas: pick(V) } }, [{ op: 'replace', path: '/spec/replicas', value: pick(V) }], { apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: pick(V) } }]) });
    else if (op === 'binding') r = await c.request('POST', `/api/v1/namespaces/${NS}/pods/${p}/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: pick([p, 'other', undefined]) }, target: pick([{ kind: 'Node', name: 'n1' }, { kind: 'Node', name: pick(V) }, {}, null]) } });
    else if (op === 'podsBindingBad') r = await c.request('POST', `/api/v1/namespaces/${NS}/bindings`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: p }, target: { kind: 'Node', name: 'n1' } } });
    else if (op === 'eviction') r = await c.request('POST', `/api/v1/namespaces/${NS}/pods/${p}/eviction`, { body: { apiVersion: pick(['policy/v1', 'policy/v1beta1', 'v1']), kind: 'Eviction', metadata: { name: pick([p, 'x']) }, deleteOptions: pick([undefined, { gracePeriodSeconds: pick(V) }, { preconditions: { uid: 'x' } }]) } });
    else if (op === 'token') r = await c.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/sa/token`, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: pick([[], ['x'], null, 'x']), expirationSeconds: pick(V), boundObjectRef: pick([undefined, { kind: 'Pod', apiVersion: 'v1', name: p }, { kind: 'Secret', name: 'nope' }, { kind: 'Node', apiVersion: 'v1', name: 'n1' }, {}]) } } });
    else if (op === 'ephemeral') r = await c.request('PUT', `/api/v1/namespaces/${NS}/pods/${p}/ephemeralcontainers`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: p }, spec: { containers: [{ name: 'c', image: 'x' }], ephemeralContainers: pick([[{ name: 'e', image: 'busybox' }], [{ name: 'c', image: 'x' }], [{}], null, 'x']) } } });
    else if (op === 'resize') r = await c.request('PUT', `/api/v1/namespaces/${NS}/pods/${p}/resize`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: p, resourceVersion: pick([undefined, '1', 'x']) }, spec: { containers: pick([[{ name: 'c', image: 'x', resources: resources() }], [{ name: 'd', image: 'x' }], [], null, 'x', [{ name: 'c', image: 'x' }, { name: 'e', image: 'x' }]]) } } });
    else if (op === 'resizePatch') r = await c.request('PATCH', `/api/v1/namespaces/${NS}/pods/${p}/resize${pick(['', '?dryRun=All', '?fieldManager=m'])}`, { headers: { 'content-type': pick(['application/merge-patch+json', 'application/json-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml']) }, body: pick([{ spec: { containers: [{ name: 'c', resources: resources() }] } }, [{ op: 'add', path: '/spec/containers/0/resources', value: resources() }], { apiVersion: 'v1', kind: 'Pod', spec: { containers: [{ name: pick(['c', 'z']), resources: resources() }] } }, { spec: { initContainers: [{ name: 'i', image: 'x', resources: resources() }] } }]) });
    else r = await c.request('PATCH', `/api/v1/namespaces/${NS}/pods/${p}/status`, { headers: { 'content-type': 'application/merge-patch+json' }, body: { status: { phase: pick(['Running', 'Bogus', 1, null]), conditions: pick([[{ type: 'Ready', status: 'True' }], [{}], 'x']) } } });
    counts[`${op} ${r.status}`] = (counts[`${op} ${r.status}`] ?? 0) + 1;
    if (r.status < 0 || r.status >= 500 || (r.status >= 400 && String(r.type).includes('json') && !/"kind":\s*"Status"/.test(r.text))) problems.push({ op, status: r.status, answer: r.text?.slice(0, 300) });
    // every request here uses a verb discovery lists for its subresource: 405 is a route missing
    // (pods/eviction answered nothing else until it was implemented)
    else if (r.status === 405) problems.push({ op, status: r.status, answer: r.text?.slice(0, 300) });
  }
  c.close();
  return report('subresources', { answers: counts, problems: problems.length }, problems);
}
