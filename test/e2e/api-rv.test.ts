// The resourceVersion tables of get and list, every cell, and paging, over raw HTTPS against a
// real keelson process.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, NO_CA_PUBLISHER, type Cluster, NO_POD_GC } from './harness.js';

let c: Cluster;
const NS = 'rv';
const base = `/api/v1/namespaces/${NS}/configmaps`;

async function mk(name: string, data: Record<string, string> = { k: 'v' }, labels?: Record<string, string>): Promise<any> {
  const r = await c.raw('POST', base, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data } });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

async function put(obj: any): Promise<any> {
  const r = await c.raw('PUT', `${base}/${obj.metadata.name}`, { body: obj });
  assert.equal(r.status, 200, r.text);
  return r.json();
}

async function list(query: string): Promise<{ status: number; body: any; headers: any }> {
  const r = await c.raw('GET', `${base}?${query}`);
  return { status: r.status, body: r.json(), headers: r.headers };
}

const names = (l: any) => l.items.map((i: any) => i.metadata.name);

// revisions of interest
let rvAfterA = 0; // a, b, c exist
let rvAfterD = 0; // d created
let rvNow = 0;

before(async () => {
  c = await startCluster({ args: [NO_CA_PUBLISHER, NO_POD_GC] });
  const ns = await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  assert.equal(ns.status, 201, ns.text);
  await mk('a');
  await mk('b');
  const cc = await mk('c');
  rvAfterA = Number(cc.metadata.resourceVersion);
  const d = await mk('d');
  rvAfterD = Number(d.metadata.resourceVersion);
  // modify a after d
  const a = (await c.raw('GET', `${base}/a`)).json();
  a.data = { k: 'changed' };
  const a2 = await put(a);
  rvNow = Number(a2.metadata.resourceVersion);
});

after(async () => {
  await c?.stop();
});

describe('get', () => {
  test('resourceVersion unset: Most Recent', async () => {
    const r = await c.raw('GET', `${base}/a`);
    assert.equal(r.status, 200);
    assert.equal(r.json().data.k, 'changed');
    assert.equal(r.json().metadata.resourceVersion, String(rvNow));
  });
  test('resourceVersion=0: Any', async () => {
    const r = await c.raw('GET', `${base}/a?resourceVersion=0`);
    assert.equal(r.status, 200);
    assert.equal(r.json().metadata.name, 'a');
  });
  test('resourceVersion=N: Not older than N', async () => {
    const r = await c.raw('GET', `${base}/a?resourceVersion=${rvAfterA}`);
    assert.equal(r.status, 200);
    assert.ok(Number(r.json().metadata.resourceVersion) >= rvAfterA);
    assert.equal(r.json().data.k, 'changed');
  });
  test('a version newer than the server: 504 Too large resource version with Retry-After', async () => {
    const r = await c.raw('GET', `${base}/a?resourceVersion=${rvNow + 1000}`);
    assert.equal(r.status, 504);
    const s = r.json();
    assert.equal(s.kind, 'Status');
    assert.equal(s.reason, 'Timeout');
    assert.match(s.message, /Too large resource version/);
    assert.equal(s.details.causes[0].reason, 'ResourceVersionTooLarge');
    assert.ok(r.headers['retry-after']);
  });
  test('a malformed resourceVersion: 400; a list words it as storage\'s ValidateListOptions does', async () => {
    const r = await c.raw('GET', `${base}/a?resourceVersion=abc`);
    assert.equal(r.status, 400);
    assert.equal(r.json().reason, 'BadRequest');
    const l = await c.raw('GET', `${base}?resourceVersion=abc`);
    assert.equal(l.status, 400);
    assert.equal(l.json().message, 'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax');
  });
});

describe('list: resourceVersionMatch unset', () => {
  test('limit unset, rv unset: Most Recent', async () => {
    const l = await list('');
    assert.equal(l.status, 200);
    assert.deepEqual(names(l.body), ['a', 'b', 'c', 'd']);
    assert.ok(Number(l.body.metadata.resourceVersion) >= rvNow);
    assert.equal(l.body.kind, 'ConfigMapList');
    assert.equal(l.body.apiVersion, 'v1');
  });
  test('limit unset, rv=0: Any', async () => {
    const l = await list('resourceVersion=0');
    assert.equal(l.status, 200);
    assert.deepEqual(names(l.body), ['a', 'b', 'c', 'd']);
  });
  test('limit unset, rv=N: Not older than', async () => {
    const l = await list(`resourceVersion=${rvAfterA}`);
    assert.equal(l.status, 200);
    assert.ok(Number(l.body.metadata.resourceVersion) >= rvAfterA);
    assert.deepEqual(names(l.body), ['a', 'b', 'c', 'd']);
  });
  test('limit set, continue unset, rv unset: Most Recent', async () => {
    const l = await list('limit=2');
    assert.equal(l.status, 200);
    assert.deepEqual(names(l.body), ['a', 'b']);
    assert.ok(l.body.metadata.continue);
    assert.equal(l.body.metadata.remainingItemCount, 2);
  });
  test('limit set, continue unset, rv=0: Any, served whole from the cache (the limit is ignored, as the watch cache ignores it)', async () => {
    for (const q of ['limit=2&resourceVersion=0', 'limit=2&resourceVersion=0&resourceVersionMatch=NotOlderThan']) {
      const l = await list(q);
      assert.equal(l.status, 200);
      assert.deepEqual(names(l.body), ['a', 'b', 'c', 'd'], q);
      assert.equal(l.body.metadata.continue, undefined);
      assert.equal(l.body.metadata.remainingItemCount, undefined);
    }
  });
  test('limit set, continue unset, rv=N: Exact', async () => {
    const l = await list(`limit=10&resourceVersion=${rvAfterA}`);
    assert.equal(l.status, 200);
    assert.equal(l.body.metadata.resourceVersion, String(rvAfterA));
    // d did not exist yet, and a had its first value
    assert.deepEqual(names(l.body), ['a', 'b', 'c']);
    assert.equal(l.body.items[0].data.k, 'v');
  });
  test('limit set, continue set, rv unset or 0: Continuation', async () => {
    const p1 = await list('limit=1');
    for (const rv of ['', '&resourceVersion=0']) {
      const p2 = await list(`limit=1&continue=${encodeURIComponent(p1.body.metadata.continue)}${rv}`);
      assert.equal(p2.status, 200, JSON.stringify(p2.body));
      assert.deepEqual(names(p2.body), ['b']);
      assert.equal(p2.body.metadata.resourceVersion, p1.body.metadata.resourceVersion);
    }
  });
  test('limit set, continue set, rv=N: Invalid, 400', async () => {
    const p1 = await list('limit=1');
    const p2 = await list(`limit=1&continue=${encodeURIComponent(p1.body.metadata.continue)}&resourceVersion=${rvAfterA}`);
    assert.equal(p2.status, 400);
    assert.equal(p2.body.reason, 'BadRequest');
    assert.match(p2.body.message, /specifying resource version is not allowed when using continue/);
  });
});

describe('list: resourceVersionMatch=Exact', () => {
  for (const limit of ['', '&limit=10']) {
    test(`rv unset${limit}: Invalid, 400`, async () => {
      const l = await list(`resourceVersionMatch=Exact${limit}`);
      assert.equal(l.status, 400);
      assert.match(l.body.message, /resourceVersionMatch is forbidden unless resourceVersion is provided/);
    });
    test(`rv=0${limit}: Invalid, 400`, async () => {
      const l = await list(`resourceVersionMatch=Exact&resourceVersion=0${limit}`);
      assert.equal(l.status, 400);
      assert.match(l.body.message, /resourceVersionMatch "exact" is forbidden for resourceVersion "0"/);
    });
    test(`rv=N${limit}: Exact`, async () => {
      const l = await list(`resourceVersionMatch=Exact&resourceVersion=${rvAfterD}${limit}`);
      assert.equal(l.status, 200, JSON.stringify(l.body));
      assert.equal(l.body.metadata.resourceVersion, String(rvAfterD));
      assert.deepEqual(names(l.body), ['a', 'b', 'c', 'd']);
      assert.equal(l.body.items[0].data.k, 'v');
    });
  }
  test('Exact at a version newer than the server: 504', async () => {
    const l = await list(`resourceVersionMatch=Exact&resourceVersion=${rvNow + 500}`);
    assert.equal(l.status, 504);
    assert.match(l.body.message, /Too large resource version/);
  });
});

describe('list: resourceVersionMatch=NotOlderThan', () => {
  for (const limit of ['', '&limit=10']) {
    test(`rv unset${limit}: Invalid, 400`, async () => {
      const l = await list(`resourceVersionMatch=NotOlderThan${limit}`);
      assert.equal(l.status, 400);
      assert.match(l.body.message, /resourceVersionMatch is forbidden unless resourceVersion is provided/);
    });
    test(`rv=0${limit}: Any`, async () => {
      const l = await list(`resourceVersionMatch=NotOlderThan&resourceVersion=0${limit}`);
      assert.equal(l.status, 200);
      assert.deepEqual(names(l.body), ['a', 'b', 'c', 'd']);
    });
    test(`rv=N${limit}: Not older than`, async () => {
      const l = await list(`resourceVersionMatch=NotOlderThan&resourceVersion=${rvAfterA}${limit}`);
      assert.equal(l.status, 200);
      assert.ok(Number(l.body.metadata.resourceVersion) >= rvNow);
      assert.deepEqual(names(l.body), ['a', 'b', 'c', 'd']);
      assert.equal(l.body.items[0].data.k, 'changed');
    });
  }
  test('NotOlderThan a version newer than the server: 504 with Retry-After', async () => {
    const l = await list(`resourceVersionMatch=NotOlderThan&resourceVersion=${rvNow + 500}`);
    assert.equal(l.status, 504);
    assert.ok(l.headers['retry-after']);
  });
  test('an unknown resourceVersionMatch: 400', async () => {
    const l = await list(`resourceVersionMatch=Sometime&resourceVersion=1`);
    assert.equal(l.status, 400);
    assert.match(l.body.message, /Unsupported value: "Sometime"/);
  });
  test('resourceVersionMatch with continue: 400', async () => {
    const p1 = await list('limit=1');
    const l = await list(`resourceVersionMatch=NotOlderThan&resourceVersion=1&limit=1&continue=${encodeURIComponent(p1.body.metadata.continue)}`);
    assert.equal(l.status, 400);
  });
  test('sendInitialEvents on a list: 400', async () => {
    const l = await list('sendInitialEvents=true');
    assert.equal(l.status, 400);
    assert.match(l.body.message, /sendInitialEvents is forbidden for list/);
  });
});

describe('paging', () => {
  test('one snapshot across all pages; later writes are invisible', async () => {
    await mk('p1', {}, { page: 'yes' });
    await mk('p2', {}, { page: 'yes' });
    await mk('p3', {}, { page: 'yes' });
    const first = await list('limit=2');
    const rv = first.body.metadata.resourceVersion;
    const seen = names(first.body);
    // writes after the first page: a new object sorting last, a change and a deletion
    await mk('zz-late');
    const b = (await c.raw('GET', `${base}/b`)).json();
    b.data = { k: 'later' };
    await put(b);
    assert.equal((await c.raw('DELETE', `${base}/p3`)).status, 200);
    let cont = first.body.metadata.continue;
    let remaining = first.body.metadata.remainingItemCount;
    assert.equal(typeof remaining, 'number');
    while (cont) {
      const page = await list(`limit=2&continue=${encodeURIComponent(cont)}`);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      assert.equal(page.body.metadata.resourceVersion, rv);
      seen.push(...names(page.body));
      for (const it of page.body.items) if (it.metadata.name === 'b') assert.equal(it.data.k, 'v');
      assert.equal(page.body.metadata.remainingItemCount, remaining - page.body.items.length || undefined);
      remaining = page.body.metadata.remainingItemCount;
      cont = page.body.metadata.continue;
    }
    assert.deepEqual(seen, ['a', 'b', 'c', 'd', 'p1', 'p2', 'p3']);
  });
  test('remainingItemCount is left out with a label selector', async () => {
    const l = await list('limit=1&labelSelector=page%3Dyes');
    assert.equal(l.status, 200);
    assert.equal(l.body.items.length, 1);
    assert.ok(l.body.metadata.continue);
    assert.equal(l.body.metadata.remainingItemCount, undefined);
  });
  test('a malformed continue token: 400', async () => {
    const l = await list('limit=1&continue=not-a-token');
    assert.equal(l.status, 400);
    assert.match(l.body.message, /invalid continue token/);
  });
  test('the last page has no continue token', async () => {
    const l = await list('limit=100');
    assert.equal(l.body.metadata.continue, undefined);
    assert.equal(l.body.metadata.remainingItemCount, undefined);
  });
});

describe('selectors', () => {
  test('label selectors: equality, set-based, existence', async () => {
    await mk('l1', {}, { tier: 'web', env: 'prod' });
    await mk('l2', {}, { tier: 'db', env: 'prod' });
    await mk('l3', {}, { tier: 'web' });
    const q = async (s: string) => names((await list(`labelSelector=${encodeURIComponent(s)}`)).body);
    assert.deepEqual(await q('tier=web'), ['l1', 'l3']);
    assert.deepEqual(await q('tier!=web,env'), ['l2']);
    assert.deepEqual(await q('tier in (db, web),env=prod'), ['l1', 'l2']);
    assert.deepEqual(await q('env,!nope'), ['l1', 'l2']);
    assert.deepEqual(await q('tier notin (web),env'), ['l2']);
  });
  test('field selectors: metadata.name and metadata.namespace', async () => {
    const l = await list('fieldSelector=metadata.name%3Dl2');
    assert.deepEqual(names(l.body), ['l2']);
    const l2 = await list('fieldSelector=metadata.name!%3Dl2,metadata.namespace%3Drv&labelSelector=tier');
    assert.deepEqual(names(l2.body), ['l1', 'l3']);
  });
  test('an unknown field selector: 400 naming the supported fields', async () => {
    const l = await list('fieldSelector=spec.foo%3Dx');
    assert.equal(l.status, 400);
    assert.equal(l.body.message, '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"');
  });
  test('malformed selectors: 400', async () => {
    for (const q of ['labelSelector=a%3D%3D%3Db', 'labelSelector=in%20(', 'fieldSelector=nonsense', 'labelSelector=-bad-key-%3Dx']) {
      const l = await list(q);
      assert.equal(l.status, 400, q);
      assert.equal(l.body.reason, 'BadRequest');
    }
  });
  test('kind-specific field selectors on pods and events', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'fp' },
      spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'x' }] },
    };
    assert.equal((await c.raw('POST', `/api/v1/namespaces/${NS}/pods`, { body: pod })).status, 201);
    const byNode = await c.raw('GET', `/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a`);
    assert.deepEqual(byNode.json().items.map((i: any) => i.metadata.name), ['fp']);
    const byPhase = await c.raw('GET', `/api/v1/namespaces/${NS}/pods?fieldSelector=status.phase%3DPending`);
    assert.deepEqual(byPhase.json().items.map((i: any) => i.metadata.name), ['fp']);
    const none = await c.raw('GET', `/api/v1/namespaces/${NS}/pods?fieldSelector=status.phase%3DRunning`);
    assert.deepEqual(none.json().items, []);
    const ev = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e1' },
      involvedObject: { kind: 'Pod', name: 'fp', namespace: NS },
      reason: 'Tested',
      type: 'Normal',
    };
    assert.equal((await c.raw('POST', `/api/v1/namespaces/${NS}/events`, { body: ev })).status, 201);
    const evs = await c.raw('GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.kind%3DPod,involvedObject.name%3Dfp,reason%3DTested`);
    assert.deepEqual(evs.json().items.map((i: any) => i.metadata.name), ['e1']);
    const bad = await c.raw('GET', `/api/v1/namespaces/${NS}/pods?fieldSelector=spec.bogus%3Dx`);
    assert.equal(bad.status, 400);
    assert.equal(bad.json().message, 'field label not supported: spec.bogus');
  });
});

describe('all namespaces and cluster scope', () => {
  test('a namespaced type listed across namespaces', async () => {
    const r = await c.raw('GET', '/api/v1/configmaps');
    assert.equal(r.status, 200);
    assert.ok(r.json().items.some((i: any) => i.metadata.namespace === NS));
  });
  test('cluster-scoped list and get', async () => {
    const r = await c.raw('GET', '/api/v1/namespaces');
    assert.deepEqual(
      r.json().items.map((i: any) => i.metadata.name).filter((n: string) => n.startsWith('kube-') || n === 'default'),
      ['default', 'kube-node-lease', 'kube-public', 'kube-system'],
    );
    const g = await c.raw('GET', '/api/v1/namespaces/kube-system');
    assert.equal(g.json().status.phase, 'Active');
  });
});
