// Watch over raw HTTPS: the resourceVersion table of watch, resume, 410 after compaction,
// bookmarks, timeouts, streaming lists, selector transitions and Protobuf frames.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { startCluster, NO_CA_PUBLISHER, type Cluster } from './harness.js';
import { WatchFrameDecoder, decodeEnvelope } from '../../src/codec/protobuf.js';

let c: Cluster;
const NS = 'w';
const base = `/api/v1/namespaces/${NS}/configmaps`;

async function mk(name: string, labels?: Record<string, string>): Promise<any> {
  const r = await c.raw('POST', base, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data: { k: 'v' } } });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

async function update(name: string, mutate: (o: any) => void): Promise<any> {
  const o = (await c.raw('GET', `${base}/${name}`)).json();
  mutate(o);
  const r = await c.raw('PUT', `${base}/${name}`, { body: o });
  assert.equal(r.status, 200, r.text);
  return r.json();
}

const summary = (evs: any[]) => evs.map((e) => `${e.type}:${e.object.metadata?.name ?? ''}`);

before(async () => {
  c = await startCluster({ args: [NO_CA_PUBLISHER] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
});

after(async () => {
  await c?.stop();
});

describe('watch resourceVersion semantics', () => {
  test('rv unset: Get State and Start at Most Recent', async () => {
    await mk('s1');
    await mk('s2');
    const s = c.stream(`${base}?watch=true`);
    await s.until((e) => e.length >= 2);
    await mk('s3');
    const evs = await s.until((e) => e.length >= 3);
    s.close();
    assert.equal(s.status, 200);
    assert.equal(s.headers['content-type'], 'application/json');
    assert.equal(s.headers['transfer-encoding'], 'chunked');
    assert.deepEqual(summary(evs), ['ADDED:s1', 'ADDED:s2', 'ADDED:s3']);
  });

  test('rv=0: Get State and Start at Any', async () => {
    const s = c.stream(`${base}?watch=1&resourceVersion=0`);
    const evs = await s.until((e) => e.length >= 3);
    s.close();
    assert.deepEqual(summary(evs), ['ADDED:s1', 'ADDED:s2', 'ADDED:s3']);
  });

  test('rv=N: Start at Exact, changes after N only, in order, with DELETED', async () => {
    const l = (await c.raw('GET', base)).json();
    const rv = l.metadata.resourceVersion;
    const s = c.stream(`${base}?watch=1&resourceVersion=${rv}`);
    await s.ready;
    await update('s1', (o) => (o.data = { k: 'x' }));
    assert.equal((await c.raw('DELETE', `${base}/s2`)).status, 200);
    await mk('s4');
    const evs = await s.until((e) => e.length >= 3);
    s.close();
    assert.deepEqual(summary(evs), ['MODIFIED:s1', 'DELETED:s2', 'ADDED:s4']);
    assert.equal(evs[0].object.data.k, 'x');
    const rvs = evs.map((e) => Number(e.object.metadata.resourceVersion));
    assert.ok(rvs[0]! > Number(rv) && rvs[0]! < rvs[1]! && rvs[1]! < rvs[2]!);
  });

  test('resume from an older resourceVersion replays what followed it', async () => {
    const first = await mk('r1');
    await update('r1', (o) => (o.data = { k: '2' }));
    await update('r1', (o) => (o.data = { k: '3' }));
    const s = c.stream(`${base}?watch=1&resourceVersion=${first.metadata.resourceVersion}&fieldSelector=metadata.name%3Dr1`);
    const evs = await s.until((e) => e.length >= 2);
    s.close();
    assert.deepEqual(
      evs.map((e) => `${e.type}:${e.object.data.k}`),
      ['MODIFIED:2', 'MODIFIED:3'],
    );
  });

  test('watch of one object by URL (legacy /watch/ path) and by field selector', async () => {
    const cur = (await c.raw('GET', `${base}/s1`)).json();
    const s1 = c.stream(`/api/v1/watch/namespaces/${NS}/configmaps/s1?resourceVersion=${cur.metadata.resourceVersion}`);
    const s2 = c.stream(`${base}?watch=1&fieldSelector=metadata.name%3Ds1&resourceVersion=${cur.metadata.resourceVersion}`);
    await Promise.all([s1.ready, s2.ready]);
    await update('s3', (o) => (o.data = { other: '1' }));
    await update('s1', (o) => (o.data = { k: 'y' }));
    const e1 = await s1.until((e) => e.length >= 1);
    const e2 = await s2.until((e) => e.length >= 1);
    s1.close();
    s2.close();
    assert.deepEqual(summary(e1), ['MODIFIED:s1']);
    assert.deepEqual(summary(e2), ['MODIFIED:s1']);
  });

  test('label selector transitions: leaving the set is DELETED, entering it is ADDED', async () => {
    await mk('t1', { team: 'a' });
    const l = (await c.raw('GET', base)).json();
    const s = c.stream(`${base}?watch=1&labelSelector=team%3Da&resourceVersion=${l.metadata.resourceVersion}`);
    await s.ready;
    await update('t1', (o) => (o.metadata.labels = { team: 'b' }));
    await update('t1', (o) => (o.metadata.labels = { team: 'a' }));
    const evs = await s.until((e) => e.length >= 2);
    s.close();
    assert.deepEqual(summary(evs), ['DELETED:t1', 'ADDED:t1']);
    // the DELETED of a transition is the last state that matched, at the transition's version
    // (Kubernetes' cacheWatcher.convertToWatchEvent)
    assert.deepEqual(evs[0].object.metadata.labels, { team: 'a' });
    assert.equal(evs[1].object.metadata.labels.team, 'a');
    assert.ok(Number(evs[0].object.metadata.resourceVersion) < Number(evs[1].object.metadata.resourceVersion));
  });

  test('timeoutSeconds ends the stream, after a bookmark when bookmarks are allowed', async () => {
    const l = (await c.raw('GET', base)).json();
    const s = c.stream(`${base}?watch=1&timeoutSeconds=1&allowWatchBookmarks=true&resourceVersion=${l.metadata.resourceVersion}`);
    await s.untilEnd(5000);
    const evs = s.events();
    assert.equal(evs.length, 1);
    assert.equal(evs[0].type, 'BOOKMARK');
    assert.equal(evs[0].object.kind, 'ConfigMap');
    assert.equal(evs[0].object.apiVersion, 'v1');
    assert.ok(Number(evs[0].object.metadata.resourceVersion) >= Number(l.metadata.resourceVersion));
  });

  test('a watch from a version newer than the server waits for it', async () => {
    const l = (await c.raw('GET', base)).json();
    const future = Number(l.metadata.resourceVersion) + 1;
    const s = c.stream(`${base}?watch=1&resourceVersion=${future}`);
    await s.ready;
    await mk('f1'); // takes revision `future`: not delivered (the watch starts after it)
    await mk('f2');
    const evs = await s.until((e) => e.length >= 1);
    s.close();
    assert.deepEqual(summary(evs), ['ADDED:f2']);
  });

  test('HEAD of a watch: the stream\'s headers and no stream, and the keep-alive connection serves the next request', async () => {
    // one connection for all three requests (HTTP/1.1, keep-alive)
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: c.credentials.ca, cert: c.credentials.cert, key: c.credentials.key });
    const send = (method: string, path: string) =>
      new Promise<{ status: number; type?: string; body: string; reused: boolean }>((resolve, reject) => {
        const req = https.request({ host: '127.0.0.1', port: c.port, method, path, agent, servername: 'localhost', timeout: 10_000 }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body, reused: req.reusedSocket }));
        });
        req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 10 s`)));
        req.on('error', reject);
        req.end();
      });
    try {
      const h = await send('HEAD', `${base}?watch=1`);
      assert.equal(h.status, 200);
      assert.equal(h.type, 'application/json');
      assert.equal(h.body, '');
      const h2 = await send('HEAD', `${base}?watch=1&resourceVersion=0&allowWatchBookmarks=true`);
      assert.equal(h2.status, 200);
      assert.equal(h2.reused, true);
      const g = await send('GET', base);
      assert.equal(g.status, 200);
      assert.equal(g.reused, true);
      assert.equal(JSON.parse(g.body).kind, 'ConfigMapList');
    } finally {
      agent.destroy();
    }
  });
});

describe('streaming lists (sendInitialEvents)', () => {
  test('synthetic ADDED events, the initial-events-end bookmark, then live events', async () => {
    // (a consistent read: the bookmark is at the newest version or later when the watch began, so
    // not older than a list taken before it; a list taken after it may be newer, as any write in
    // the cluster (a lease renewed) moves the version)
    const cur = (await c.raw('GET', base)).json();
    const s = c.stream(`${base}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=team`);
    const init = await s.until((e) => e.some((x) => x.type === 'BOOKMARK'));
    assert.deepEqual(summary(init), ['ADDED:t1', 'BOOKMARK:']);
    const bm = init[1];
    assert.equal(bm.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
    assert.ok(Number(bm.object.metadata.resourceVersion) >= Number(cur.metadata.resourceVersion), `bookmark ${bm.object.metadata.resourceVersion}, list before ${cur.metadata.resourceVersion}`);
    await mk('t2', { team: 'c' });
    const evs = await s.until((e) => e.length >= 3);
    s.close();
    assert.deepEqual(summary(evs).slice(2), ['ADDED:t2']);
  });

  test('with resourceVersion=0 and with a given resourceVersion', async () => {
    const cur = (await c.raw('GET', base)).json();
    for (const rv of ['0', cur.metadata.resourceVersion]) {
      const s = c.stream(`${base}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${rv}&labelSelector=team%3Dc`);
      const init = await s.until((e) => e.some((x) => x.type === 'BOOKMARK'));
      s.close();
      assert.deepEqual(summary(init), ['ADDED:t2', 'BOOKMARK:']);
    }
  });

  test('the end bookmark carries the empty list client-go builds its answer from (kubernetes.io/initial-events-list-blueprint)', async () => {
    const s = c.stream(`${base}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=team%3Dc`);
    const init = await s.until((e) => e.some((x) => x.type === 'BOOKMARK'));
    s.close();
    const bp = init.at(-1).object.metadata.annotations['kubernetes.io/initial-events-list-blueprint'];
    assert.equal(Buffer.from(bp, 'base64').toString(), '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":null}');
    const m = c.stream(`${base}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=team%3Dc`, {
      Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
    });
    const minit = await m.until((e) => e.some((x) => x.type === 'BOOKMARK'));
    m.close();
    const mbp = minit.at(-1).object.metadata.annotations['kubernetes.io/initial-events-list-blueprint'];
    assert.equal(Buffer.from(mbp, 'base64').toString(), '{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{},"items":null}');
  });

  test('WatchList on: a watch from "" or "0" naming neither option is a streaming list (SetListOptionsDefaults)', async () => {
    for (const rv of ['', '&resourceVersion=0']) {
      const s = c.stream(`${base}?watch=1&allowWatchBookmarks=true&labelSelector=team%3Dc${rv}`);
      const init = await s.until((e) => e.some((x) => x.type === 'BOOKMARK'));
      s.close();
      assert.deepEqual(summary(init), ['ADDED:t2', 'BOOKMARK:']);
      assert.equal(init[1].object.metadata.annotations['k8s.io/initial-events-end'], 'true');
    }
  });

  test('sendInitialEvents=false: no initial events, whatever the resourceVersion', async () => {
    for (const rv of ['', '&resourceVersion=0']) {
      const s = c.stream(`${base}?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&labelSelector=team%3Dd${rv}`);
      await s.ready;
      await mk(`sie-false${rv ? '0' : ''}`, { team: 'd' });
      const evs = await s.until((e) => e.length >= 1);
      s.close();
      assert.deepEqual(summary(evs), [`ADDED:sie-false${rv ? '0' : ''}`]);
    }
  });

  test('a streaming list from a version the server does not reach: 200, then an ERROR event with the 504', async () => {
    const cur = Number((await c.raw('GET', base)).json().metadata.resourceVersion);
    const s = c.stream(`${base}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=${cur + 100000}`);
    await s.untilEnd(10_000);
    assert.equal(s.status, 200);
    const evs = s.events();
    assert.equal(evs.length, 1);
    assert.equal(evs[0].type, 'ERROR');
    assert.equal(evs[0].object.code, 504);
    assert.match(evs[0].object.message, /^Timeout: Too large resource version: \d+, current: \d+$/);
  });

  test('a list with both resourceVersionMatch and sendInitialEvents errors reports both, in ValidateListOptions\' order', async () => {
    const r = await c.raw('GET', `${base}?resourceVersionMatch=Exact&sendInitialEvents=true`);
    assert.equal(r.status, 400);
    assert.equal(
      r.json().message,
      'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list]',
    );
  });

  test('sendInitialEvents without resourceVersionMatch=NotOlderThan: 400', async () => {
    const r = await c.raw('GET', `${base}?watch=1&sendInitialEvents=true`);
    assert.equal(r.status, 400);
    assert.match(r.json().message, /sendInitialEvents requires setting resourceVersionMatch to NotOlderThan/);
    const r2 = await c.raw('GET', `${base}?watch=1&resourceVersionMatch=NotOlderThan&resourceVersion=1`);
    assert.equal(r2.status, 400);
    assert.match(r2.json().message, /resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided/);
  });
});

describe('encodings of a watch', () => {
  test('Protobuf: length-prefixed WatchEvent frames holding enveloped objects', async () => {
    const l = (await c.raw('GET', base)).json();
    const s = c.stream(`${base}?watch=1&resourceVersion=${l.metadata.resourceVersion}`, { accept: 'application/vnd.kubernetes.protobuf' });
    await s.ready;
    assert.equal(s.headers['content-type'], 'application/vnd.kubernetes.protobuf;stream=watch');
    await mk('pb1');
    const dec = new WatchFrameDecoder();
    const deadline = Date.now() + 5000;
    let events: any[] = [];
    while (events.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      const d = new WatchFrameDecoder();
      events = d.push(Buffer.concat(s.chunks));
    }
    void dec;
    s.close();
    assert.equal(events.length, 1);
    assert.equal(events[0].type, 'ADDED');
    const env = decodeEnvelope(events[0].object);
    assert.equal(env.kind, 'ConfigMap');
    assert.equal(env.apiVersion, 'v1');
  });

  test('Table watch events carry one row each', async () => {
    const l = (await c.raw('GET', base)).json();
    const s = c.stream(`${base}?watch=1&resourceVersion=${l.metadata.resourceVersion}`, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' });
    await s.ready;
    await mk('tb1');
    const evs = await s.until((e) => e.length >= 1);
    s.close();
    assert.equal(evs[0].type, 'ADDED');
    assert.equal(evs[0].object.kind, 'Table');
    assert.equal(evs[0].object.rows.length, 1);
    assert.equal(evs[0].object.rows[0].cells[0], 'tb1');
    assert.equal(evs[0].object.rows[0].object.kind, 'PartialObjectMetadata');
  });
});

describe('compaction: 410 Gone', () => {
  let cc: Cluster;
  before(async () => {
    cc = await startCluster({ args: [NO_CA_PUBLISHER, '--etcd-compaction-interval=1s'] });
  });
  after(async () => {
    await cc?.stop();
  });

  test('watch, Exact list and continue token older than the compacted revision', async () => {
    const p = '/api/v1/namespaces/default/configmaps';
    const created: any[] = [];
    for (const n of ['c1', 'c2', 'c3']) {
      const r = await cc.raw('POST', p, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n } } });
      created.push(r.json());
    }
    const oldRV = created[0].metadata.resourceVersion;
    const page = (await cc.raw('GET', `${p}?limit=1`)).json();
    assert.ok(page.metadata.continue);
    // let two compactions pass while writes continue
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, 500));
      const o = (await cc.raw('GET', `${p}/c3`)).json();
      o.data = { i: String(i) };
      assert.equal((await cc.raw('PUT', `${p}/c3`, { body: o })).status, 200);
    }
    // watch: 200 with one ERROR event carrying 410 Expired, then the stream ends
    const s = cc.stream(`${p}?watch=1&resourceVersion=${oldRV}`);
    await s.untilEnd(5000);
    const evs = s.events();
    assert.equal(evs.length, 1);
    assert.equal(evs[0].type, 'ERROR');
    assert.equal(evs[0].object.kind, 'Status');
    assert.equal(evs[0].object.code, 410);
    assert.equal(evs[0].object.reason, 'Expired');
    assert.match(evs[0].object.message, /too old resource version/);
    // exact list
    const ex = await cc.raw('GET', `${p}?resourceVersion=${oldRV}&resourceVersionMatch=Exact`);
    assert.equal(ex.status, 410);
    assert.equal(ex.json().reason, 'Expired');
    assert.equal(ex.json().message, 'The resourceVersion for the provided list is too old.');
    // continue token
    const ct = await cc.raw('GET', `${p}?limit=1&continue=${encodeURIComponent(page.metadata.continue)}`);
    assert.equal(ct.status, 410);
    assert.equal(ct.json().reason, 'Expired');
    assert.match(ct.json().message, /The provided continue parameter is too old to display a consistent list result/);
    assert.ok(ct.json().metadata.continue, 'a token to continue inconsistently is offered');
    const rest = await cc.raw('GET', `${p}?limit=10&continue=${encodeURIComponent(ct.json().metadata.continue)}`);
    assert.equal(rest.status, 200);
    assert.deepEqual(rest.json().items.map((i: any) => i.metadata.name), ['c2', 'c3']);
  });
});

describe('compaction off, WatchList off', () => {
  let cc: Cluster;
  before(async () => {
    cc = await startCluster({ args: [NO_CA_PUBLISHER, '--etcd-compaction-interval=0', '--feature-gates=kube:WatchList=false'] });
  });
  after(async () => {
    await cc?.stop();
  });

  test('--etcd-compaction-interval=0 turns compaction off: a watch resumes from an old resourceVersion', async () => {
    const p = '/api/v1/namespaces/default/configmaps';
    const made = (await cc.raw('POST', p, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nc' } } })).json();
    const o = (await cc.raw('GET', `${p}/nc`)).json();
    o.data = { a: '1' };
    assert.equal((await cc.raw('PUT', `${p}/nc`, { body: o })).status, 200);
    await new Promise((r) => setTimeout(r, 1500));
    const s = cc.stream(`${p}?watch=1&resourceVersion=${made.metadata.resourceVersion}&fieldSelector=metadata.name%3Dnc`);
    const evs = await s.until((e) => e.length >= 1);
    s.close();
    assert.equal(evs[0].type, 'MODIFIED', JSON.stringify(evs[0]));
    assert.deepEqual(evs[0].object.data, { a: '1' });
  });

  test('--feature-gates=WatchList=false: sendInitialEvents is refused, and a plain watch from "" has no end bookmark', async () => {
    const p = '/api/v1/namespaces/default/configmaps';
    const r = await cc.raw('GET', `${p}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`);
    assert.equal(r.status, 400);
    assert.equal(r.json().message, 'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled');
    const s = cc.stream(`${p}?watch=1&allowWatchBookmarks=true&fieldSelector=metadata.name%3Dnc&timeoutSeconds=1`);
    await s.untilEnd(5000);
    assert.deepEqual(summary(s.events()), ['ADDED:nc', 'BOOKMARK:']);
    assert.equal(s.events()[1].object.metadata.annotations, undefined, 'the timeout\'s bookmark, not the end of initial events');
  });
});
