// The endpoints and EndpointSlice controllers of the embedded controller manager, against a real
// keelson. There is no kubelet: the tests give pods their IPs and readiness through the status
// subresource, and create the Node the pods run on (the EndpointSlice controller, as Kubernetes',
// leaves out the pods of a node it does not know, and takes the zone from the node's labels).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, type Cluster, NO_POD_GC } from './harness.js';

let c: Cluster;
const NS = 'ep';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const SLICES = `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`;

before(async () => {
  // (the pod garbage collector off: a pod here names a node that does not exist)
  c = await startCluster({ args: ['--storage-backend=memory', '--max-endpoints-per-slice=2', NO_POD_GC] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', labels: { 'topology.kubernetes.io/zone': 'zone-a' } } };
  const made = await c.raw('POST', '/api/v1/nodes', { body: node });
  assert.equal(made.status, 201, made.text);
});
after(async () => {
  await c?.stop();
});

interface PodOpts {
  labels: Record<string, string>;
  ports?: { name: string; containerPort: number }[];
  hostname?: string;
  subdomain?: string;
  finalizers?: string[];
  /** the node it runs on (default node-a; null: not scheduled) */
  node?: string | null;
}

async function makePod(name: string, o: PodOpts): Promise<any> {
  const body = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: o.labels, ...(o.finalizers ? { finalizers: o.finalizers } : {}) },
    spec: { nodeName: o.node === null ? undefined : (o.node ?? 'node-a'), hostname: o.hostname, subdomain: o.subdomain, containers: [{ name: 'c', image: 'nginx', ports: o.ports }] },
  };
  const r = await c.raw('POST', `/api/v1/namespaces/${NS}/pods`, { body });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

/** what a kubelet would report: the pod running with an IP, Ready or not */
async function runPod(name: string, ip: string, ready: boolean): Promise<void> {
  const status = { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] };
  const r = await c.raw('PATCH', `/api/v1/namespaces/${NS}/pods/${name}/status`, { body: JSON.stringify({ status }), headers: MERGE });
  assert.equal(r.status, 200, r.text);
}

async function makeService(name: string, spec: any, labels?: Record<string, string>): Promise<any> {
  const r = await c.raw('POST', `/api/v1/namespaces/${NS}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name, labels }, spec } });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

async function endpoints(name: string): Promise<any> {
  const r = await c.raw('GET', `/api/v1/namespaces/${NS}/endpoints/${name}`);
  return r.status === 200 ? r.json() : undefined;
}

async function slicesOf(service: string): Promise<any[]> {
  const r = await c.raw('GET', `${SLICES}?labelSelector=${encodeURIComponent(`kubernetes.io/service-name=${service}`)}`);
  assert.equal(r.status, 200, r.text);
  return r.json().items;
}

/** the (ip, ready) pairs of an Endpoints' subsets for one port */
function addressesFor(ep: any, port: number): { ready: string[]; notReady: string[] } {
  const ready: string[] = [];
  const notReady: string[] = [];
  for (const s of ep?.subsets ?? []) {
    if (!(s.ports ?? []).some((p: any) => p.port === port)) continue;
    for (const a of s.addresses ?? []) ready.push(a.ip);
    for (const a of s.notReadyAddresses ?? []) notReady.push(a.ip);
  }
  return { ready: ready.sort(), notReady: notReady.sort() };
}

/** every endpoint of a Service's slices, by pod name */
function endpointsByPod(slices: any[]): Map<string, any> {
  const out = new Map<string, any>();
  for (const s of slices) for (const e of s.endpoints ?? []) out.set(e.targetRef?.name, { ...e, slice: s });
  return out;
}

const sameSet = (a: string[], b: string[]) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
const TRIGGER = 'endpoints.kubernetes.io/last-change-trigger-time';

test('ready and not-ready pods, a named targetPort: Endpoints subsets and EndpointSlices', async () => {
  const svc = await makeService('web', { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }, { name: 'metrics', port: 9090, targetPort: 9090 }] }, { tier: 'front' });
  const http = [{ name: 'http', containerPort: 8080 }];
  const w1 = await makePod('w1', { labels: { app: 'web' }, ports: http });
  await makePod('w2', { labels: { app: 'web' }, ports: http });
  // (no port named http: it serves metrics only)
  await makePod('w3', { labels: { app: 'web' } });
  await makePod('other', { labels: { app: 'other' }, ports: http });
  await runPod('w1', '10.1.0.1', true);
  await runPod('w2', '10.1.0.2', false);
  await runPod('w3', '10.1.0.3', true);
  await runPod('other', '10.1.0.9', true);

  const ep = await until('the Endpoints of web', async () => {
    const e = await endpoints('web');
    const h = addressesFor(e, 8080);
    const m = addressesFor(e, 9090);
    return sameSet(h.ready, ['10.1.0.1']) && sameSet(h.notReady, ['10.1.0.2']) && sameSet(m.ready, ['10.1.0.1', '10.1.0.3']) && sameSet(m.notReady, ['10.1.0.2']) ? e : undefined;
  });
  // repacked: one subset per port here (their address sets differ), each port with its name and protocol
  assert.equal(ep.subsets.length, 2, JSON.stringify(ep.subsets));
  const httpSubset = ep.subsets.find((s: any) => s.ports[0].port === 8080);
  assert.deepEqual(httpSubset.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
  assert.deepEqual(httpSubset.addresses[0], { ip: '10.1.0.1', nodeName: 'node-a', targetRef: { kind: 'Pod', namespace: NS, name: 'w1', uid: w1.metadata.uid } });
  assert.deepEqual(ep.metadata.labels, { tier: 'front' });
  assert.match(ep.metadata.annotations[TRIGGER], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

  const slices = await until('the EndpointSlices of web', async () => {
    const s = await slicesOf('web');
    const byPod = endpointsByPod(s);
    return byPod.size === 3 && byPod.get('w2')?.conditions?.ready === false ? s : undefined;
  });
  // two port sets (w3 has no http port): two slices
  assert.equal(slices.length, 2, JSON.stringify(slices));
  for (const s of slices) {
    assert.equal(s.addressType, 'IPv4');
    assert.match(s.metadata.name, /^web-[a-z0-9]{5}$/);
    assert.deepEqual(s.metadata.labels, { tier: 'front', 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' });
    assert.deepEqual(s.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: svc.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    assert.match(s.metadata.annotations[TRIGGER], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  }
  const byPod = endpointsByPod(slices);
  const e1 = byPod.get('w1');
  assert.deepEqual(e1.addresses, ['10.1.0.1']);
  assert.deepEqual(e1.conditions, { ready: true, serving: true, terminating: false });
  assert.equal(e1.nodeName, 'node-a');
  assert.equal(e1.zone, 'zone-a');
  assert.deepEqual(e1.targetRef, { kind: 'Pod', namespace: NS, name: 'w1', uid: w1.metadata.uid });
  assert.deepEqual(byPod.get('w2').conditions, { ready: false, serving: false, terminating: false });
  const ports = (p: any[]) => p.map((x) => `${x.name}/${x.port}/${x.protocol}`).sort();
  assert.deepEqual(ports(e1.slice.ports), ['http/8080/TCP', 'metrics/9090/TCP']);
  assert.deepEqual(ports(byPod.get('w3').slice.ports), ['metrics/9090/TCP']);
  assert.equal(byPod.has('other'), false);

  // readiness flips move the address
  await runPod('w2', '10.1.0.2', true);
  await until('w2 ready in the Endpoints', async () => sameSet(addressesFor(await endpoints('web'), 8080).ready, ['10.1.0.1', '10.1.0.2']));
  await until('w2 ready in the slices', async () => endpointsByPod(await slicesOf('web')).get('w2')?.conditions?.ready === true);

  // kubectl's views of them
  const getEp = c.kubectl(['get', 'endpoints', 'web', '-n', NS]);
  assert.equal(getEp.code, 0, getEp.stderr);
  assert.match(getEp.stdout, /^NAME\s+ENDPOINTS\s+AGE\n/);
  assert.match(getEp.stdout, /\nweb\s+10\.1\.0\.\d:(8080|9090),\S+ \+ 2 more\.\.\.\s+\d+s\n/);
  const getSlices = c.kubectl(['get', 'endpointslices', '-n', NS, '-l', 'kubernetes.io/service-name=web']);
  assert.equal(getSlices.code, 0, getSlices.stderr);
  assert.match(getSlices.stdout, /^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE\n/);
  assert.match(getSlices.stdout, /\nweb-[a-z0-9]{5}\s+IPv4\s+\S+\s+\S*10\.1\.0\.3/);
  const describe = c.kubectl(['describe', 'service', 'web', '-n', NS]);
  assert.equal(describe.code, 0, describe.stderr);
  assert.match(describe.stdout, /\nEndpoints:\s+\S*10\.1\.0\.1:8080/);
});

test('a headless Service with publishNotReadyAddresses: not-ready pods published, hostnames, the headless label', async () => {
  await makeService('hl', { clusterIP: 'None', publishNotReadyAddresses: true, selector: { app: 'hl' }, ports: [{ port: 5432, targetPort: 5432 }] });
  await makePod('h1', { labels: { app: 'hl' }, hostname: 'h1', subdomain: 'hl' });
  await runPod('h1', '10.2.0.1', false);
  const ep = await until('the Endpoints of hl', async () => {
    const e = await endpoints('hl');
    return e?.subsets?.[0]?.addresses?.length === 1 ? e : undefined;
  });
  assert.equal(ep.subsets[0].notReadyAddresses, undefined);
  assert.equal(ep.subsets[0].addresses[0].hostname, 'h1');
  // (an unnamed port: no name in the Endpoints, name "" in the slice, as Kubernetes writes them)
  assert.deepEqual(ep.subsets[0].ports, [{ port: 5432, protocol: 'TCP' }]);
  assert.deepEqual(ep.metadata.labels, { 'service.kubernetes.io/headless': '' });
  const slice = await until('the slice of hl', async () => (await slicesOf('hl')).find((s) => s.addressType === 'IPv4' && s.endpoints?.length === 1));
  assert.equal(slice.metadata.labels['service.kubernetes.io/headless'], '');
  assert.equal(slice.endpoints[0].hostname, 'h1');
  // (published: ready though not serving)
  assert.deepEqual(slice.endpoints[0].conditions, { ready: true, serving: false, terminating: false });
  assert.deepEqual(slice.ports, [{ name: '', protocol: 'TCP', port: 5432 }]);
});

test('slices split at --max-endpoints-per-slice; relabelled, terminating and deleted pods', async () => {
  await makeService('app', { selector: { app: 'a' }, ports: [{ port: 80, targetPort: 8080 }] });
  await makePod('a1', { labels: { app: 'a' } });
  await makePod('a2', { labels: { app: 'a' }, finalizers: ['example.com/hold'] });
  await makePod('a3', { labels: { app: 'a' } });
  await runPod('a1', '10.3.0.1', true);
  await runPod('a2', '10.3.0.2', true);
  await runPod('a3', '10.3.0.3', true);
  const slices = await until('three endpoints in the slices of app', async () => {
    const s = await slicesOf('app');
    return endpointsByPod(s).size === 3 ? s : undefined;
  });
  assert.equal(slices.length, 2);
  assert.deepEqual(slices.map((s) => s.endpoints.length).sort(), [1, 2]);
  await until('three addresses in the Endpoints', async () => addressesFor(await endpoints('app'), 8080).ready.length === 3);

  // a pod whose labels no longer match leaves both
  assert.equal((await c.raw('PATCH', `/api/v1/namespaces/${NS}/pods/a1`, { body: JSON.stringify({ metadata: { labels: { app: 'gone' } } }), headers: MERGE })).status, 200);
  await until('a1 out of the Endpoints', async () => sameSet(addressesFor(await endpoints('app'), 8080).ready, ['10.3.0.2', '10.3.0.3']));
  await until('a1 out of the slices', async () => {
    const s = await slicesOf('app');
    return endpointsByPod(s).size === 2 && !endpointsByPod(s).has('a1');
  });

  // a pod being deleted (held by its finalizer): out of the Endpoints, terminating in the slices
  assert.equal((await c.raw('DELETE', `/api/v1/namespaces/${NS}/pods/a2`)).status, 200);
  await until('a2 out of the Endpoints', async () => sameSet(addressesFor(await endpoints('app'), 8080).ready, ['10.3.0.3']));
  const terminating = await until('a2 terminating in the slices', async () => {
    const e = endpointsByPod(await slicesOf('app')).get('a2');
    return e?.conditions?.terminating === true ? e : undefined;
  });
  assert.deepEqual(terminating.conditions, { ready: false, serving: true, terminating: true });
  // (no kubelet to end it: the finalizer removed, then deleted at once)
  assert.equal((await c.raw('PATCH', `/api/v1/namespaces/${NS}/pods/a2`, { body: JSON.stringify({ metadata: { finalizers: null } }), headers: MERGE })).status, 200);
  assert.equal((await c.raw('DELETE', `/api/v1/namespaces/${NS}/pods/a2?gracePeriodSeconds=0`)).status, 200);
  await until('a2 out of the slices', async () => !endpointsByPod(await slicesOf('app')).has('a2'));

  // the last pod deleted: no addresses, and one empty (placeholder) slice
  assert.equal((await c.raw('DELETE', `/api/v1/namespaces/${NS}/pods/a3?gracePeriodSeconds=0`)).status, 200);
  await until('an empty Endpoints', async () => {
    const e = await endpoints('app');
    return e && (e.subsets ?? []).length === 0;
  });
  await until('one empty slice', async () => {
    const s = await slicesOf('app');
    return s.length === 1 && (s[0].endpoints ?? []).length === 0;
  });
});

test('a deleted Service takes its Endpoints and slices along; Services without a selector are left alone', async () => {
  await makeService('gone', { selector: { app: 'gone-app' }, ports: [{ port: 80 }] });
  await until('the Endpoints of gone', async () => endpoints('gone'));
  await until('the slice of gone', async () => (await slicesOf('gone')).length > 0);
  assert.equal((await c.raw('DELETE', `/api/v1/namespaces/${NS}/services/gone`)).status, 200);
  await until('the Endpoints of gone deleted', async () => (await endpoints('gone')) === undefined);
  await until('the slices of gone deleted', async () => (await slicesOf('gone')).length === 0);

  // a Service without a selector: its Endpoints are its user's
  await makeService('manual', { ports: [{ port: 80 }] });
  const mine = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'manual' }, subsets: [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ port: 80 }] }] };
  assert.equal((await c.raw('POST', `/api/v1/namespaces/${NS}/endpoints`, { body: mine })).status, 201);
  // a pod with the service's name as label, to give the controllers a reason to look
  await makePod('m1', { labels: { app: 'manual' } });
  await runPod('m1', '10.4.0.1', true);
  await new Promise((r) => setTimeout(r, 1500));
  const kept = await endpoints('manual');
  assert.deepEqual(kept.subsets, [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ port: 80, protocol: 'TCP' }] }]);
  assert.equal(kept.metadata.annotations?.[TRIGGER], undefined);
  assert.equal((await slicesOf('manual')).length, 0);
  // the API server's default/kubernetes stays as it keeps it
  const k = (await c.raw('GET', '/api/v1/namespaces/default/endpoints/kubernetes')).json();
  assert.equal(k.metadata.labels?.['service.kubernetes.io/headless'], undefined);
  assert.equal(k.metadata.annotations?.[TRIGGER], undefined);
});

test('an Endpoints deleted under its Service is written again', async () => {
  await makeService('again', { selector: { app: 'again' }, ports: [{ port: 80 }] });
  const first = await until('the Endpoints of again', async () => endpoints('again'));
  assert.equal((await c.raw('DELETE', `/api/v1/namespaces/${NS}/endpoints/again`)).status, 200);
  await until('the Endpoints of again written again', async () => {
    const e = await endpoints('again');
    return e && e.metadata.uid !== first.metadata.uid;
  });
});

test('a sync that changes nothing writes nothing; a pod on a node that does not exist is in the Endpoints, left out of the slices, with a warning', async () => {
  await makeService('quiet', { selector: { app: 'quiet' }, ports: [{ port: 80, targetPort: 8080 }] });
  await makePod('q1', { labels: { app: 'quiet' } });
  await makePod('q2', { labels: { app: 'quiet' }, node: 'node-gone' });
  await runPod('q1', '10.5.0.1', true);
  await runPod('q2', '10.5.0.2', true);
  const ep = await until('both in the Endpoints', async () => {
    const e = await endpoints('quiet');
    return addressesFor(e, 8080).ready.length === 2 ? e : undefined;
  });
  const q2 = ep.subsets[0].addresses.find((a: any) => a.ip === '10.5.0.2');
  assert.equal(q2.nodeName, 'node-gone');
  // (no warning from a create or update the controller's own cache had not seen yet)
  const warnings = (await c.raw('GET', `/api/v1/namespaces/${NS}/events`)).json().items.filter((e: any) => e.reason === 'FailedToCreateEndpoint' || e.reason === 'FailedToUpdateEndpoint');
  assert.deepEqual(warnings.map((e: any) => e.message), []);
  const slices = await until('q1 in the slices', async () => {
    const s = await slicesOf('quiet');
    return endpointsByPod(s).has('q1') ? s : undefined;
  });
  assert.equal(endpointsByPod(slices).has('q2'), false);
  const ev = await until('the FailedToUpdateEndpointSlices event', async () => {
    const list = (await c.raw('GET', `/api/v1/namespaces/${NS}/events?fieldSelector=${encodeURIComponent('involvedObject.name=quiet')}`)).json().items;
    return list.find((e: any) => e.reason === 'FailedToUpdateEndpointSlices');
  });
  assert.equal(ev.type, 'Warning');
  assert.equal(ev.involvedObject.kind, 'Service');
  assert.equal(ev.source.component, 'endpoint-slice-controller');
  assert.match(ev.message, /^Error updating Endpoint Slices for Service ep\/quiet: skipping Pod q2 for Service ep\/quiet: node "node-gone" not found$/);

  // a Service change that changes no endpoint: both synced, neither written
  const epRV = (await endpoints('quiet')).metadata.resourceVersion;
  const sliceRVs = (await slicesOf('quiet')).map((s) => s.metadata.resourceVersion).sort();
  const r = await c.raw('PATCH', `/api/v1/namespaces/${NS}/services/quiet`, { body: JSON.stringify({ metadata: { annotations: { touched: 'yes' } } }), headers: MERGE });
  assert.equal(r.status, 200, r.text);
  await new Promise((res) => setTimeout(res, 1500));
  assert.equal((await endpoints('quiet')).metadata.resourceVersion, epRV);
  assert.deepEqual((await slicesOf('quiet')).map((s) => s.metadata.resourceVersion).sort(), sliceRVs);
});

test('a pod on no node that has an IP (written by hand: there is no node agent) is in the Endpoints and the slices, without nodeName', async () => {
  await makeService('nonode', { selector: { app: 'nonode' }, ports: [{ port: 80, targetPort: 8080 }] });
  await makePod('nn-1', { labels: { app: 'nonode' }, node: null });
  await runPod('nn-1', '10.9.0.1', true);
  const ep = await until('the endpoint in the slices', async () => {
    const all = (await slicesOf('nonode')).flatMap((s) => s.endpoints ?? []);
    return all.find((e: any) => e.addresses?.[0] === '10.9.0.1');
  });
  assert.equal(ep.nodeName, undefined);
  assert.equal(ep.zone, undefined);
  assert.deepEqual(ep.conditions, { ready: true, serving: true, terminating: false });
  await until('the Endpoints', async () => addressesFor(await endpoints('nonode'), 8080).ready.includes('10.9.0.1'));
});
