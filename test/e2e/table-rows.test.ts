// A list as a JSON Table (what `kubectl get` asks for) is written from rows kept on the watch
// cache's entries (apiserver/encode.ts, tableRow): the cells printed once per stored version of
// an object, the ages in them written anew for each request, the row's object from the entry's
// JSON. These tests hold such lists to the general path's answer (`?pretty=true` takes it), with
// the server keeping one object decoded (KEELSON_DECODED_ENTRIES=1), so that rows are made from
// frozen entries too; and they check that ages move on, that a new version prints a new row, and
// that a CRD's changed columns print new rows for its existing objects.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, NO_CA_PUBLISHER, type Cluster, NO_POD_GC } from './harness.js';

let c: Cluster;
const NS = 'rows';
const pods = `/api/v1/namespaces/${NS}/pods`;
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const TABLE_BETA = 'application/json;as=Table;v=v1beta1;g=meta.k8s.io';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  c = await startCluster({ args: [NO_CA_PUBLISHER, NO_POD_GC], env: { KEELSON_DECODED_ENTRIES: '1' } });
  const r = await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  assert.equal(r.status, 201, r.text);
  for (let i = 0; i < 5; i++) {
    const p = await c.raw('POST', pods, {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${i}`, labels: { n: String(i) } }, spec: { nodeName: `node-${i % 2}`, containers: [{ name: 'c', image: 'busybox' }] } },
    });
    assert.equal(p.status, 201, p.text);
  }
  // p4 has restarted twice, the last time 90 s ago: its Restarts cell shows that time
  const p4 = (await c.raw('GET', `${pods}/p4`)).json();
  const finished = new Date(Date.now() - 90_000).toISOString().replace(/\.\d+Z$/, 'Z');
  p4.status = {
    phase: 'Running',
    containerStatuses: [
      { name: 'c', image: 'busybox', imageID: '', ready: false, restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, startedAt: finished, finishedAt: finished } } },
    ],
  };
  const s = await c.raw('PUT', `${pods}/p4/status`, { body: p4 });
  assert.equal(s.status, 200, s.text);
});
after(async () => {
  await c?.stop();
});

async function table(path: string, accept = TABLE): Promise<any> {
  const r = await c.raw('GET', path, { headers: { accept } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers['content-type'], 'application/json');
  return r.json();
}

/** the table with the cells of time columns (Age, Restarts) blanked, for comparing two answers made a moment apart */
function timeless(t: any): any {
  const timed = new Set<number>();
  (t.columnDefinitions ?? []).forEach((col: any, i: number) => {
    if (col.name === 'Age' || col.name === 'Restarts') timed.add(i);
  });
  // without column definitions (includeObject=None with noHeaders is not asked here) nothing is blanked
  return { ...t, rows: t.rows.map((r: any) => ({ ...r, cells: r.cells.map((x: unknown, i: number) => (timed.has(i) ? '' : x)) })) };
}

function seconds(cell: string): number {
  const m = /^(\d+)s$/.exec(cell);
  assert.ok(m, `an age in seconds: ${cell}`);
  return Number(m[1]);
}

test('a Table list holds what the general path writes: every includeObject, v1 and v1beta1, pages', async () => {
  for (const q of ['', '?includeObject=Metadata', '?includeObject=Object', '?includeObject=None', '?limit=2', '?labelSelector=n%3D4']) {
    for (const accept of [TABLE, TABLE_BETA]) {
      // twice: the first makes the rows, the second reads them
      for (let round = 0; round < 2; round++) {
        // (a write anywhere between the two requests, a leader election Lease renewed, moves the
        // list's resourceVersion and its continue token on: the pair is asked again until both
        // answers are of one version)
        let fast: any;
        let general: any;
        for (let attempt = 0; attempt < 5; attempt++) {
          fast = await table(pods + q, accept);
          general = await table(pods + q + (q ? '&' : '?') + 'pretty=true', accept);
          if (fast.metadata.resourceVersion === general.metadata.resourceVersion) break;
        }
        assert.deepEqual(timeless(fast), timeless(general), `${q} ${accept}`);
      }
    }
  }
  // a row's object is the object's metadata as a GET answers it
  const t = await table(pods);
  const got = (await c.raw('GET', `${pods}/p2`)).json();
  const row = t.rows.find((r: any) => r.cells[0] === 'p2');
  assert.deepEqual(row.object, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: got.metadata });
  const full = (await table(`${pods}?includeObject=Object`)).rows.find((r: any) => r.cells[0] === 'p2');
  assert.deepEqual(full.object, got);
  // all namespaces, and the raw bytes are JSON without indentation
  const all = await c.raw('GET', '/api/v1/pods', { headers: { accept: TABLE } });
  assert.ok(!all.text.includes('\n'));
  assert.deepEqual(
    all.json().rows.map((r: any) => r.cells[0]).filter((n: string) => n.startsWith('p')),
    ['p0', 'p1', 'p2', 'p3', 'p4'],
  );
});

test('the ages in kept rows are those of the moment of each request', async () => {
  const ages = async () => {
    const t = await table(pods);
    const age = t.columnDefinitions.findIndex((col: any) => col.name === 'Age');
    const restarts = t.columnDefinitions.findIndex((col: any) => col.name === 'Restarts');
    const p4 = t.rows.find((r: any) => r.cells[0] === 'p4');
    const m = /^2 \((\d+)s ago\)$/.exec(p4.cells[restarts]);
    assert.ok(m, p4.cells[restarts]);
    return { p0: seconds(t.rows[0].cells[age]), restartAgo: Number(m[1]) };
  };
  const first = await ages();
  await sleep(2100);
  const second = await ages();
  assert.ok(second.p0 >= first.p0 + 2, `${first.p0} then ${second.p0}`);
  assert.ok(second.restartAgo >= first.restartAgo + 2, `${first.restartAgo} then ${second.restartAgo}`);
  assert.ok(first.restartAgo >= 90 && first.restartAgo < 119, String(first.restartAgo));
  // kubectl prints the same rows
  const out = c.kubectl(['get', 'pods', '-n', NS]);
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/m);
  assert.match(out.stdout, /^p4\s+0\/1\s+CrashLoopBackOff\s+2 \(\d+s ago\)\s+\d+s$/m);
  assert.match(out.stdout, /^p0\s+0\/1\s+Pending\s+0\s+\d+s$/m);
  const wide = c.kubectl(['get', 'pods', '-n', NS, '-o', 'wide']);
  assert.equal(wide.code, 0, wide.stderr);
  assert.match(wide.stdout, /^p1\s+0\/1\s+Pending\s+0\s+\d+s\s+<none>\s+node-1\s+<none>\s+<none>$/m);
});

test('a new version of an object is a new row', async () => {
  await table(pods);
  const p1 = (await c.raw('GET', `${pods}/p1`)).json();
  p1.status = { phase: 'Running', podIP: '10.1.2.3', podIPs: [{ ip: '10.1.2.3' }], containerStatuses: [{ name: 'c', image: 'busybox', imageID: '', ready: true, restartCount: 0, state: { running: {} } }] };
  const s = await c.raw('PUT', `${pods}/p1/status`, { body: p1 });
  assert.equal(s.status, 200, s.text);
  const row = (await table(pods)).rows.find((r: any) => r.cells[0] === 'p1');
  assert.deepEqual(row.cells.slice(0, 4), ['p1', '1/1', 'Running', '0']);
  assert.equal(row.cells[5], '10.1.2.3');
  assert.equal(row.object.metadata.resourceVersion, s.json().metadata.resourceVersion);
});

test("a CRD's changed columns print new rows for the objects it already has", async () => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.rows.example.com' },
    spec: {
      group: 'rows.example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'string' }, color: { type: 'string' }, since: { type: 'string', format: 'date-time' } } } } } },
          additionalPrinterColumns: [
            { name: 'Size', type: 'string', jsonPath: '.spec.size' },
            { name: 'Since', type: 'date', jsonPath: '.spec.since' },
          ],
        },
      ],
    },
  };
  const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.rows.example.com';
  assert.equal((await c.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })).status, 201);
  const base = `/apis/rows.example.com/v1/namespaces/${NS}/widgets`;
  const since = new Date(Date.now() - 30_000).toISOString().replace(/\.\d+Z$/, 'Z');
  let created = 0;
  for (let i = 0; i < 50 && created === 0; i++) {
    const r = await c.raw('POST', base, { body: { apiVersion: 'rows.example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 'L', color: 'red', since } } });
    if (r.status === 201) created = 1;
    else await sleep(100); // (the new resource is being set up)
  }
  assert.equal(created, 1);
  const t1 = await table(base);
  assert.deepEqual(t1.columnDefinitions.map((d: any) => d.name), ['Name', 'Size', 'Since']);
  assert.equal(t1.rows[0].cells[1], 'L');
  const before = seconds(t1.rows[0].cells[2]);
  assert.ok(before >= 30 && before < 60, String(before));
  // the same columns by the general path
  assert.deepEqual(timeless(await table(`${base}?pretty=true`)).rows[0].cells.slice(0, 2), ['w1', 'L']);
  const cur = (await c.raw('GET', crdPath)).json();
  cur.spec.versions[0].additionalPrinterColumns = [
    { name: 'Color', type: 'string', jsonPath: '.spec.color' },
    { name: 'Since', type: 'date', jsonPath: '.spec.since' },
  ];
  assert.equal((await c.raw('PUT', crdPath, { body: cur })).status, 200);
  let t2: any;
  for (let i = 0; i < 50; i++) {
    t2 = await table(base);
    if (t2.columnDefinitions.some((d: any) => d.name === 'Color')) break;
    await sleep(100);
  }
  assert.deepEqual(t2.columnDefinitions.map((d: any) => d.name), ['Name', 'Color', 'Since']);
  assert.deepEqual(t2.rows[0].cells.slice(0, 2), ['w1', 'red']);
  assert.ok(seconds(t2.rows[0].cells[2]) >= before);
});

test('a Table watch writes the kept rows: the columns in its first event only, the cells of the list', async () => {
  const list = timeless(await table(pods));
  const r = await c.raw('GET', `${pods}?watch=1&resourceVersion=0&timeoutSeconds=1`, { headers: { accept: TABLE } });
  assert.equal(r.status, 200, r.text);
  const events = r.text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(events.length, 5);
  assert.ok(events.every((e: any) => e.type === 'ADDED' && e.object.kind === 'Table' && e.object.rows.length === 1));
  assert.deepEqual(events[0].object.columnDefinitions, list.columnDefinitions);
  assert.ok(events.slice(1).every((e: any) => e.object.columnDefinitions === null));
  const rows = events.map((e: any) => timeless({ ...e.object, columnDefinitions: list.columnDefinitions }).rows[0]);
  assert.deepEqual(
    rows.sort((a: any, b: any) => a.cells[0].localeCompare(b.cells[0])),
    list.rows,
  );
  for (const e of events) assert.equal(e.object.metadata.resourceVersion, e.object.rows[0].object.metadata.resourceVersion);
});
