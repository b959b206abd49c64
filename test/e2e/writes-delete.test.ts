// Deletion: deletionTimestamp and deletionGracePeriodSeconds, finalizers (terminating objects can
// be read and updated, no finalizer can be added, the last one removed removes the object and
// watchers see DELETED), graceful deletion of pods, preconditions, propagation policies and
// orphanDependents (their finalizers only: there is no garbage collector yet), deletecollection
// with selectors, and kubectl delete.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, expectStatus, type Cluster, type RawResponse, type RunResult, NO_POD_GC } from './harness.js';

let c: Cluster;
const NS = 'default';
const cms = `/api/v1/namespaces/${NS}/configmaps`;
const pods = `/api/v1/namespaces/${NS}/pods`;
const deploys = `/apis/apps/v1/namespaces/${NS}/deployments`;
const MERGE = { 'content-type': 'application/merge-patch+json' };

before(async () => {
  c = await startCluster({ args: [NO_POD_GC] });
});

after(async () => {
  await c?.stop();
});

function ok(r: RawResponse, code: number, what: string): any {
  assert.equal(r.status, code, `${what}: ${r.status} ${r.text.slice(0, 800)}`);
  return r.json();
}
async function get(path: string): Promise<any> {
  return ok(await c.raw('GET', path), 200, `GET ${path}`);
}
async function create(collection: string, obj: any): Promise<any> {
  return ok(await c.raw('POST', collection, { body: obj }), 201, `POST ${collection}`);
}
function run(r: RunResult): { code: number; stdout: string; stderr: string } {
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}
const cm = (name: string, extra: any = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data: { a: '1' } });
const seconds = (t: string) => Date.parse(t) / 1000;
async function until404(path: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await c.raw('GET', path)).status === 404) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`${path} is still there`);
}

describe('finalizers', () => {
  test('a delete marks the object; it stays readable and updatable; no finalizer can be added; the last one removed deletes it', async () => {
    const made = await create(cms, cm('fin', { finalizers: ['example.com/a', 'example.com/b'] }));
    const w = c.stream(`${cms}?watch=1&fieldSelector=metadata.name%3Dfin&resourceVersion=${made.metadata.resourceVersion}`);
    await w.ready;
    const t0 = Date.now() / 1000;
    const d = ok(await c.raw('DELETE', `${cms}/fin`), 200, 'delete');
    assert.equal(d.kind, 'ConfigMap');
    assert.ok(d.metadata.deletionTimestamp);
    assert.ok(Math.abs(seconds(d.metadata.deletionTimestamp) - t0) < 5, d.metadata.deletionTimestamp);
    assert.equal(d.metadata.deletionGracePeriodSeconds, 0);
    assert.deepEqual(d.metadata.finalizers, ['example.com/a', 'example.com/b']);
    assert.notEqual(d.metadata.resourceVersion, made.metadata.resourceVersion);

    const g = await get(`${cms}/fin`);
    assert.equal(g.metadata.deletionTimestamp, d.metadata.deletionTimestamp);
    // a second delete answers the object, still terminating
    const d2 = ok(await c.raw('DELETE', `${cms}/fin`), 200, 'second delete');
    assert.equal(d2.metadata.deletionTimestamp, d.metadata.deletionTimestamp);
    // updates work
    const u = ok(await c.raw('PUT', `${cms}/fin`, { body: { ...g, data: { a: 'updated' } } }), 200, 'update while terminating');
    assert.deepEqual(u.data, { a: 'updated' });
    assert.equal(u.metadata.deletionTimestamp, d.metadata.deletionTimestamp, 'an update keeps deletionTimestamp');
    // an update that leaves deletionTimestamp out keeps it
    const u2 = ok(await c.raw('PUT', `${cms}/fin`, { body: { ...u, metadata: { ...u.metadata, deletionTimestamp: undefined, deletionGracePeriodSeconds: undefined } } }), 200, 'update without deletionTimestamp');
    assert.equal(u2.metadata.deletionTimestamp, d.metadata.deletionTimestamp);
    assert.equal(u2.metadata.deletionGracePeriodSeconds, 0);
    // no new finalizer
    const f = expectStatus(await c.raw('PATCH', `${cms}/fin`, { body: '{"metadata":{"finalizers":["example.com/a","example.com/b","example.com/c"]}}', headers: MERGE }), 422, 'Invalid', 'new finalizer');
    assert.equal(f.message, 'ConfigMap "fin" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/c"}');
    // remove one: still there
    const one = ok(await c.raw('PATCH', `${cms}/fin`, { body: '{"metadata":{"finalizers":["example.com/b"]}}', headers: MERGE }), 200, 'remove a');
    assert.deepEqual(one.metadata.finalizers, ['example.com/b']);
    await get(`${cms}/fin`);
    // remove the last: gone; the answer is the patched object (Kubernetes' deleteWithoutFinalizers
    // answers with the update's object), at the resourceVersion it had
    const before = await get(`${cms}/fin`);
    const last = ok(await c.raw('PATCH', `${cms}/fin`, { body: '{"metadata":{"finalizers":null},"data":{"a":"last"}}', headers: MERGE }), 200, 'remove the last');
    assert.equal(last.metadata.name, 'fin');
    assert.equal(last.metadata.finalizers, undefined);
    assert.deepEqual(last.data, { a: 'last' });
    assert.equal(last.metadata.resourceVersion, before.metadata.resourceVersion);
    expectStatus(await c.raw('GET', `${cms}/fin`), 404, 'NotFound', 'gone');
    const ev = await w.until((e) => e.some((x) => x.type === 'DELETED'));
    w.close();
    // marked, updated, one finalizer removed (an unchanged second delete and update write nothing),
    // then DELETED carrying the last stored state: the update that emptied the finalizers is not stored
    assert.deepEqual(
      ev.map((e) => e.type),
      ['MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED'],
    );
    assert.ok(ev[0].object.metadata.deletionTimestamp);
    assert.deepEqual(ev[3].object.metadata.finalizers, ['example.com/b']);
    assert.deepEqual(ev[3].object.data, { a: 'updated' });
  });

  test('deleting a Deployment that has a finalizer bumps its generation once', async () => {
    const made = await create(deploys, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'fin-deploy', finalizers: ['example.com/x'] },
      spec: { selector: { matchLabels: { app: 'f' } }, template: { metadata: { labels: { app: 'f' } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } } },
    });
    assert.equal(made.metadata.generation, 1);
    const d = ok(await c.raw('DELETE', `${deploys}/fin-deploy`), 200, 'delete');
    assert.equal(d.metadata.generation, 2);
    const d2 = ok(await c.raw('DELETE', `${deploys}/fin-deploy`), 200, 'delete again');
    assert.equal(d2.metadata.generation, 2);
    ok(await c.raw('PATCH', `${deploys}/fin-deploy`, { body: '{"metadata":{"finalizers":null}}', headers: MERGE }), 200, 'release');
    expectStatus(await c.raw('GET', `${deploys}/fin-deploy`), 404, 'NotFound', 'gone');
  });
});

describe('pods and grace periods', () => {
  test('a pod bound to a node is only marked, with its grace period; a shorter grace period or 0 finishes it', async () => {
    const p = await create(pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bound' }, spec: { nodeName: 'node-x', containers: [{ name: 'c', image: 'nginx:1' }] } });
    assert.equal(p.spec.terminationGracePeriodSeconds, 30);
    const t0 = Date.now() / 1000;
    const d = ok(await c.raw('DELETE', `${pods}/bound`), 200, 'delete');
    assert.equal(d.metadata.deletionGracePeriodSeconds, 30);
    const due = seconds(d.metadata.deletionTimestamp) - t0;
    assert.ok(due > 25 && due < 35, `deletionTimestamp is about 30s ahead: ${due}`);
    await get(`${pods}/bound`);
    // a longer grace period changes nothing
    const longer = ok(await c.raw('DELETE', `${pods}/bound`, { body: { gracePeriodSeconds: 60 } }), 200, 'longer');
    assert.equal(longer.metadata.deletionGracePeriodSeconds, 30);
    assert.equal(longer.metadata.deletionTimestamp, d.metadata.deletionTimestamp);
    // a shorter one moves the deadline
    const shorter = ok(await c.raw('DELETE', `${pods}/bound`, { body: { gracePeriodSeconds: 10 } }), 200, 'shorter');
    assert.equal(shorter.metadata.deletionGracePeriodSeconds, 10);
    assert.equal(seconds(shorter.metadata.deletionTimestamp), seconds(d.metadata.deletionTimestamp) - 20);
    await get(`${pods}/bound`);
    ok(await c.raw('DELETE', `${pods}/bound?gracePeriodSeconds=0`), 200, 'force');
    expectStatus(await c.raw('GET', `${pods}/bound`), 404, 'NotFound', 'gone');
    // a delete without a grace period while one is pending changes nothing (BeforeDelete: "graceful
    // deletion is pending, do nothing"), whatever the pod's terminationGracePeriodSeconds
    await create(pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bound2' }, spec: { nodeName: 'node-x', containers: [{ name: 'c', image: 'nginx:1' }] } });
    const long = ok(await c.raw('DELETE', `${pods}/bound2?gracePeriodSeconds=120`), 200, 'long');
    assert.equal(long.metadata.deletionGracePeriodSeconds, 120);
    const plain = ok(await c.raw('DELETE', `${pods}/bound2`), 200, 'plain');
    assert.equal(plain.metadata.deletionGracePeriodSeconds, 120);
    assert.equal(plain.metadata.deletionTimestamp, long.metadata.deletionTimestamp);
    assert.equal(plain.metadata.resourceVersion, long.metadata.resourceVersion, 'nothing written');
    ok(await c.raw('DELETE', `${pods}/bound2?gracePeriodSeconds=0`), 200, 'force');
  });

  test('an unbound pod goes at once: watchers see it terminating, then DELETED', async () => {
    const p = await create(pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'unbound' }, spec: { schedulerName: 'manual', containers: [{ name: 'c', image: 'nginx:1' }] } });
    const w = c.stream(`${pods}?watch=1&fieldSelector=metadata.name%3Dunbound&resourceVersion=${p.metadata.resourceVersion}`);
    await w.ready;
    const d = ok(await c.raw('DELETE', `${pods}/unbound`), 200, 'delete');
    assert.equal(d.metadata.deletionGracePeriodSeconds, 0);
    assert.ok(d.metadata.deletionTimestamp);
    expectStatus(await c.raw('GET', `${pods}/unbound`), 404, 'NotFound', 'gone at once');
    const ev = await w.until((e) => e.some((x) => x.type === 'DELETED'));
    w.close();
    assert.deepEqual(
      ev.map((e) => [e.type, e.object.metadata.deletionGracePeriodSeconds]),
      [
        ['MODIFIED', 0],
        ['DELETED', 0],
      ],
    );
  });

  test('an update may not set or change deletionTimestamp or deletionGracePeriodSeconds (422 field is immutable); a set timestamp is kept silently', async () => {
    await create(cms, cm('imm'));
    const ts = expectStatus(await c.raw('PATCH', `${cms}/imm`, { body: '{"metadata":{"deletionTimestamp":"2020-01-01T00:00:00Z"}}', headers: MERGE }), 422, 'Invalid', 'timestamp');
    assert.equal(ts.message, 'ConfigMap "imm" is invalid: metadata.deletionTimestamp: Invalid value: 2020-01-01 00:00:00 +0000 UTC: field is immutable');
    const gp = expectStatus(await c.raw('PATCH', `${cms}/imm`, { body: '{"metadata":{"deletionGracePeriodSeconds":7}}', headers: MERGE }), 422, 'Invalid', 'grace');
    assert.equal(gp.message, 'ConfigMap "imm" is invalid: metadata.deletionGracePeriodSeconds: Invalid value: 7: field is immutable');
    await create(cms, cm('imm2', { finalizers: ['example.com/hold'] }));
    const d = ok(await c.raw('DELETE', `${cms}/imm2`), 200, 'delete');
    const moved = ok(await c.raw('PATCH', `${cms}/imm2`, { body: '{"metadata":{"deletionTimestamp":"2020-01-01T00:00:00Z","labels":{"a":"b"}}}', headers: MERGE }), 200, 'timestamp kept');
    assert.equal(moved.metadata.deletionTimestamp, d.metadata.deletionTimestamp);
    expectStatus(await c.raw('PATCH', `${cms}/imm2`, { body: '{"metadata":{"deletionGracePeriodSeconds":5}}', headers: MERGE }), 422, 'Invalid', 'grace of a terminating object');
    ok(await c.raw('PATCH', `${cms}/imm2`, { body: '{"metadata":{"finalizers":null}}', headers: MERGE }), 200, 'release');
  });

  test('a create naming a resourceVersion is refused with storage\'s words (400: kube-apiserver answers it with 500); a dry run passes', async () => {
    const r = expectStatus(await c.raw('POST', cms, { body: cm('rvset', { resourceVersion: '5' }) }), 400, 'BadRequest', 'create with rv');
    assert.equal(r.message, 'resourceVersion should not be set on objects to be created');
    expectStatus(await c.raw('GET', `${cms}/rvset`), 404, 'NotFound', 'nothing stored');
    ok(await c.raw('POST', `${cms}?dryRun=All`, { body: cm('rvset', { resourceVersion: '5' }) }), 201, 'dry run');
    ok(await c.raw('POST', cms, { body: cm('rvset0', { resourceVersion: '0' }) }), 201, '"0" is no version');
  });

  test('a namespace\'s delete: marked (deletionTimestamp, Terminating, no grace period); deletes while it terminates change nothing; its own precondition words', async () => {
    const nsPath = '/api/v1/namespaces/del-ns';
    await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'del-ns' }, spec: { finalizers: ['example.com/hold'] } });
    const pu = expectStatus(await c.raw('DELETE', nsPath, { body: { preconditions: { uid: 'abc' } } }), 409, 'Conflict', 'uid');
    assert.match(pu.message, /^Operation cannot be fulfilled on namespaces "del-ns": Precondition failed: UID in precondition: abc, UID in object meta: [0-9a-f-]{36}$/);
    const d = ok(await c.raw('DELETE', nsPath), 200, 'delete');
    assert.ok(d.metadata.deletionTimestamp);
    assert.equal(d.metadata.deletionGracePeriodSeconds, undefined);
    assert.equal(d.status.phase, 'Terminating');
    const again = ok(await c.raw('DELETE', `${nsPath}?propagationPolicy=Foreground`), 200, 'again');
    assert.equal(again.metadata.finalizers, undefined);
    assert.equal(again.metadata.deletionTimestamp, d.metadata.deletionTimestamp);
    // the finalize subresource lets it go
    const cur = await get(nsPath);
    ok(await c.raw('PUT', `${nsPath}/finalize`, { body: { ...cur, spec: { finalizers: [] } } }), 200, 'finalize');
    await until404(nsPath);
  });

  test('kubectl delete of a bound pod with --grace-period=0 --force', async () => {
    await create(pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'forced' }, spec: { nodeName: 'node-x', containers: [{ name: 'c', image: 'nginx:1' }] } });
    assert.deepEqual(run(c.kubectl(['delete', 'pod', 'forced', '--grace-period=0', '--force'], { version: '1.33' })), {
      code: 0,
      stdout: 'pod "forced" force deleted\n',
      stderr: 'Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.\n',
    });
    expectStatus(await c.raw('GET', `${pods}/forced`), 404, 'NotFound', 'gone');
  });
});

describe('preconditions', () => {
  test('a uid or resourceVersion that does not match: 409 with Kubernetes\' message; a match deletes', async () => {
    const made = await create(cms, cm('pre'));
    const u = expectStatus(await c.raw('DELETE', `${cms}/pre`, { body: { preconditions: { uid: 'wrong-uid' } } }), 409, 'Conflict', 'uid');
    assert.equal(
      u.message,
      `Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (wrong-uid) does not match the UID in record (${made.metadata.uid}). The object might have been deleted and then recreated`,
    );
    assert.deepEqual(u.details, { name: 'pre', kind: 'ConfigMap' });
    const r = expectStatus(await c.raw('DELETE', `${cms}/pre`, { body: { preconditions: { resourceVersion: '1' } } }), 409, 'Conflict', 'resourceVersion');
    assert.equal(
      r.message,
      `Operation cannot be fulfilled on ConfigMap "pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${made.metadata.resourceVersion}). The object might have been modified`,
    );
    assert.deepEqual(await get(`${cms}/pre`), made);
    ok(await c.raw('DELETE', `${cms}/pre`, { body: { preconditions: { uid: made.metadata.uid, resourceVersion: made.metadata.resourceVersion } } }), 200, 'matching');
    expectStatus(await c.raw('GET', `${cms}/pre`), 404, 'NotFound', 'gone');

    const d = await create(deploys, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'pre' },
      spec: { selector: { matchLabels: { app: 'p' } }, template: { metadata: { labels: { app: 'p' } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } } },
    });
    const du = expectStatus(await c.raw('DELETE', `${deploys}/pre`, { body: { preconditions: { uid: 'nope' } } }), 409, 'Conflict', 'deployment uid');
    assert.equal(du.message, `Operation cannot be fulfilled on Deployment.apps "pre": the UID in the precondition (nope) does not match the UID in record (${d.metadata.uid}). The object might have been deleted and then recreated`);
    assert.deepEqual(du.details, { name: 'pre', group: 'apps', kind: 'Deployment' });
  });
});

describe('propagation', () => {
  test("keelson server's garbage collector is on by default: an Orphan delete leaves the finalizer, which the collector removes", async () => {
    await create(cms, cm('prop-gc'));
    const d = ok(await c.raw('DELETE', `${cms}/prop-gc`, { body: { propagationPolicy: 'Orphan' } }), 200, 'orphan');
    assert.deepEqual(d.metadata.finalizers, ['orphan']);
    for (let i = 0; i < 200 && (await c.raw('GET', `${cms}/prop-gc`)).status !== 404; i++) await new Promise((r) => setTimeout(r, 50));
    expectStatus(await c.raw('GET', `${cms}/prop-gc`), 404, 'NotFound', 'gone once the collector removed the finalizer');
  });

  test('with --enable-garbage-collector=false: Orphan and Foreground delete at once, as kube-apiserver does with it off', async () => {
    const off = await startCluster({ args: ['--storage-backend=memory', '--enable-garbage-collector=false'] });
    try {
      for (const body of [{ propagationPolicy: 'Orphan' }, { propagationPolicy: 'Foreground' }, { orphanDependents: true }]) {
        assert.equal((await off.raw('POST', cms, { body: cm('prop-nogc') })).status, 201);
        const r = await off.raw('DELETE', `${cms}/prop-nogc`, { body });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json().status, 'Success');
        assert.equal((await off.raw('GET', `${cms}/prop-nogc`)).status, 404);
      }
    } finally {
      await off.stop();
    }
  });

  describe('with --enable-garbage-collector (kube-apiserver\'s default, for a garbage collector run against the server)', () => {
    let g: Cluster;
    before(async () => {
      // (the embedded collector off: these are the API server's finalizers, which nothing removes here)
      g = await startCluster({ args: ['--storage-backend=memory', '--enable-garbage-collector=true', '--controllers=*,-garbage-collector-controller'] });
    });
    after(async () => {
      await g?.stop();
    });
    const gok = async (method: string, path: string, body: any, code: number, what: string) => {
      const r = await g.raw(method, path, body === undefined ? {} : { body });
      assert.equal(r.status, code, `${what}: ${r.status} ${r.text.slice(0, 500)}`);
      return r.json();
    };
    const cases: [string, any, string[] | null][] = [
      ['Orphan', { propagationPolicy: 'Orphan' }, ['orphan']],
      ['Foreground', { propagationPolicy: 'Foreground' }, ['foregroundDeletion']],
      ['Background', { propagationPolicy: 'Background' }, null],
      ['orphanDependents true', { orphanDependents: true }, ['orphan']],
      ['orphanDependents false', { orphanDependents: false }, null],
    ];
    for (const [what, body, finalizers] of cases) {
      test(`${what}: ${finalizers ? `the ${finalizers.join(', ')} finalizer, the object stays` : 'deleted at once'}`, async () => {
        const name = `prop-${what.toLowerCase().replace(/ /g, '-')}`;
        await gok('POST', cms, cm(name), 201, 'create');
        const d = await gok('DELETE', `${cms}/${name}`, body, 200, what);
        if (finalizers) {
          assert.deepEqual(d.metadata.finalizers, finalizers);
          assert.ok(d.metadata.deletionTimestamp);
          assert.equal(d.metadata.deletionGracePeriodSeconds, 0);
          const r = await g.raw('PATCH', `${cms}/${name}`, { body: '{"metadata":{"finalizers":null}}', headers: MERGE });
          assert.equal(r.status, 200, r.text);
        }
        assert.equal((await g.raw('GET', `${cms}/${name}`)).status, 404);
      });
    }

    test('the query form of propagationPolicy', async () => {
      await gok('POST', cms, cm('prop-query'), 201, 'create');
      const d = await gok('DELETE', `${cms}/prop-query?propagationPolicy=Foreground`, undefined, 200, 'query');
      assert.deepEqual(d.metadata.finalizers, ['foregroundDeletion']);
      assert.equal((await g.raw('PATCH', `${cms}/prop-query`, { body: '{"metadata":{"finalizers":null}}', headers: MERGE })).status, 200);
    });

    test('deletionFinalizersForGarbageCollection: a policy replaces the other finalizer; Background takes both away', async () => {
      // an object created with `orphan`: Background leaves no finalizer, so it goes at once
      await gok('POST', cms, cm('gc-bg', { finalizers: ['orphan'] }), 201, 'create');
      const bg = await gok('DELETE', `${cms}/gc-bg?propagationPolicy=Background`, undefined, 200, 'background');
      assert.equal(bg.status, 'Success');
      // Foreground on `orphan`: foregroundDeletion instead
      await gok('POST', cms, cm('gc-fg', { finalizers: ['orphan'] }), 201, 'create');
      const fg = await gok('DELETE', `${cms}/gc-fg?propagationPolicy=Foreground`, undefined, 200, 'foreground');
      assert.deepEqual(fg.metadata.finalizers, ['foregroundDeletion']);
      // a terminating object's other finalizers stay
      await gok('POST', cms, cm('gc-term', { finalizers: ['x.y/z', 'orphan'] }), 201, 'create');
      await gok('DELETE', `${cms}/gc-term`, undefined, 200, 'first');
      const again = await gok('DELETE', `${cms}/gc-term?propagationPolicy=Foreground`, undefined, 200, 'again');
      assert.deepEqual(again.metadata.finalizers, ['x.y/z', 'foregroundDeletion']);
      for (const n of ['gc-fg', 'gc-term']) assert.equal((await g.raw('PATCH', `${cms}/${n}`, { body: '{"metadata":{"finalizers":null}}', headers: MERGE })).status, 200);
    });

    test('DefaultGarbageCollectionPolicy: a ReplicationController and a batch/v1 Job orphan by default; an Event takes no finalizer', async () => {
      const rc = {
        apiVersion: 'v1',
        kind: 'ReplicationController',
        metadata: { name: 'gc-rc' },
        spec: { replicas: 0, selector: { app: 'rc' }, template: { metadata: { labels: { app: 'rc' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
      };
      await gok('POST', `/api/v1/namespaces/${NS}/replicationcontrollers`, rc, 201, 'rc');
      const d = await gok('DELETE', `/api/v1/namespaces/${NS}/replicationcontrollers/gc-rc`, undefined, 200, 'rc delete');
      assert.deepEqual(d.metadata.finalizers, ['orphan']);
      const job = {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'gc-job' },
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
      };
      await gok('POST', `/apis/batch/v1/namespaces/${NS}/jobs`, job, 201, 'job');
      const jd = await gok('DELETE', `/apis/batch/v1/namespaces/${NS}/jobs/gc-job`, undefined, 200, 'job delete');
      assert.deepEqual(jd.metadata.finalizers, ['orphan']);
      // (kubectl sends propagationPolicy=Background, which deletes at once)
      await gok('POST', `/apis/batch/v1/namespaces/${NS}/jobs`, { ...job, metadata: { name: 'gc-job2' } }, 201, 'job2');
      const kd = g.kubectl(['delete', 'job', 'gc-job2', '--wait=false']);
      assert.equal(kd.code, 0, kd.stderr);
      assert.equal((await g.raw('GET', `/apis/batch/v1/namespaces/${NS}/jobs/gc-job2`)).status, 404);
      const ev = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'gc-ev' }, involvedObject: { kind: 'Pod', name: 'p', namespace: NS }, reason: 'R', message: 'm' };
      await gok('POST', `/api/v1/namespaces/${NS}/events`, ev, 201, 'event');
      const ed = await gok('DELETE', `/api/v1/namespaces/${NS}/events/gc-ev?propagationPolicy=Orphan`, undefined, 200, 'event delete');
      assert.equal(ed.status, 'Success');
      for (const p of [`/api/v1/namespaces/${NS}/replicationcontrollers/gc-rc`, `/apis/batch/v1/namespaces/${NS}/jobs/gc-job`]) {
        assert.equal((await g.raw('PATCH', p, { body: '{"metadata":{"finalizers":null}}', headers: MERGE })).status, 200);
      }
    });
  });

  test('orphanDependents=false on an object with finalizers answers 202 Accepted', async () => {
    await create(cms, cm('prop-202', { finalizers: ['example.com/x'] }));
    const d = ok(await c.raw('DELETE', `${cms}/prop-202`, { body: { orphanDependents: false } }), 202, 'accepted');
    assert.ok(d.metadata.deletionTimestamp);
    assert.deepEqual(d.metadata.finalizers, ['example.com/x']);
    ok(await c.raw('PATCH', `${cms}/prop-202`, { body: '{"metadata":{"finalizers":null}}', headers: MERGE }), 200, 'release');
  });

  test('both orphanDependents and propagationPolicy, or an unknown policy: 422, nothing deleted', async () => {
    await create(cms, cm('prop-bad'));
    const both = expectStatus(await c.raw('DELETE', `${cms}/prop-bad`, { body: { orphanDependents: true, propagationPolicy: 'Orphan' } }), 422, 'Invalid', 'both');
    assert.equal(both.message, 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set');
    const bad = expectStatus(await c.raw('DELETE', `${cms}/prop-bad`, { body: { propagationPolicy: 'Sideways' } }), 422, 'Invalid', 'unknown');
    assert.equal(bad.message, 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"');
    // DeleteOptions that do not decode are an error, never a delete
    const body = await c.raw('DELETE', `${cms}/prop-bad`, { body: '{"gracePeriodSeconds":"soon"}', headers: { 'content-type': 'application/json' } });
    assert.ok(body.status >= 400, `malformed DeleteOptions: ${body.status} ${body.text}`);
    assert.equal(body.json().status, 'Failure');
    await get(`${cms}/prop-bad`);
    // both errors, in ValidateDeleteOptions' order
    const two = expectStatus(await c.raw('DELETE', `${cms}/prop-bad?propagationPolicy=Bogus&orphanDependents=true`), 422, 'Invalid', 'two');
    assert.equal(
      two.message,
      'DeleteOptions.meta.k8s.io "" is invalid: [propagationPolicy: Invalid value: "Bogus": orphanDependents and deletionPropagation cannot be both set, propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil"]',
    );
  });

  test('DeleteOptions come from the body when there is one, and the query is then not read (DeleteResource)', async () => {
    await create(cms, cm('q-ignored'));
    const d = ok(await c.raw('DELETE', `${cms}/q-ignored?propagationPolicy=Bogus&dryRun=All`, { body: {} }), 200, 'body wins');
    assert.equal(d.status, 'Success');
    expectStatus(await c.raw('GET', `${cms}/q-ignored`), 404, 'NotFound', 'deleted, not a dry run');
  });
});

describe('deletecollection', () => {
  test('with a label selector and with a field selector: only the matching objects go, listed in the answer', async () => {
    for (const [n, grp] of [
      ['dc-1', 'x'],
      ['dc-2', 'x'],
      ['dc-3', 'y'],
      ['dc-4', 'y'],
    ]) {
      await create(cms, cm(n, { labels: { grp } }));
    }
    const r = ok(await c.raw('DELETE', `${cms}?labelSelector=grp%3Dx`), 200, 'by label');
    assert.equal(r.kind, 'ConfigMapList');
    assert.deepEqual(r.items.map((i: any) => i.metadata.name).sort(), ['dc-1', 'dc-2']);
    const left = await get(`${cms}?labelSelector=grp`);
    assert.deepEqual(left.items.map((i: any) => i.metadata.name).sort(), ['dc-3', 'dc-4']);
    const f = ok(await c.raw('DELETE', `${cms}?fieldSelector=metadata.name%3Ddc-3`), 200, 'by field');
    assert.deepEqual(
      f.items.map((i: any) => i.metadata.name),
      ['dc-3'],
    );
    await get(`${cms}/dc-4`);
    // an unknown field selector is rejected
    const bad = expectStatus(await c.raw('DELETE', `${cms}?fieldSelector=data.a%3D1`), 400, 'BadRequest', 'field selector');
    assert.equal(bad.message, '"data.a" is not a known field selector: only "metadata.name", "metadata.namespace"');
    await get(`${cms}/dc-4`);
  });

  test("the list options are a list's: checked as a list checks them, and a limit deletes one page", async () => {
    for (const n of ['dco-1', 'dco-2', 'dco-3']) await create(cms, cm(n, { labels: { dco: 'y' } }));
    for (const [q, code, reason, message] of [
      ['resourceVersionMatch=Exact', 400, 'BadRequest', /resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided/],
      ['sendInitialEvents=true', 400, 'BadRequest', /sendInitialEvents is forbidden for list/],
      ['limit=abc', 400, 'BadRequest', /^strconv.ParseInt: parsing "abc": invalid syntax$/],
      ['limit=1&continue=zzz', 400, 'BadRequest', /^invalid continue token/],
      ['resourceVersion=99999999&resourceVersionMatch=NotOlderThan', 504, 'Timeout', /Too large resource version/],
    ] as const) {
      const r = expectStatus(await c.raw('DELETE', `${cms}?labelSelector=dco&${q}`), code, reason, q);
      assert.match(r.message, message, q);
    }
    assert.equal((await get(`${cms}?labelSelector=dco`)).items.length, 3, 'nothing deleted by a refused request');
    const page = ok(await c.raw('DELETE', `${cms}?labelSelector=dco&limit=2`), 200, 'one page');
    assert.deepEqual(page.items.map((i: any) => i.metadata.name), ['dco-1', 'dco-2']);
    assert.ok(page.metadata.continue, 'the answer names the next page');
    assert.deepEqual((await get(`${cms}?labelSelector=dco`)).items.map((i: any) => i.metadata.name), ['dco-3']);
  });

  test('the answer lists the objects as they were read, not as each delete left them', async () => {
    const a = await create(cms, cm('dcr-1', { labels: { dcr: 'y' } }));
    const b = await create(cms, cm('dcr-2', { labels: { dcr: 'y' }, finalizers: ['example.com/hold'] }));
    const r = ok(await c.raw('DELETE', `${cms}?labelSelector=dcr`), 200, 'deletecollection');
    assert.deepEqual(
      r.items.map((i: any) => [i.metadata.name, i.metadata.resourceVersion, i.metadata.deletionTimestamp]),
      [
        ['dcr-1', a.metadata.resourceVersion, undefined],
        ['dcr-2', b.metadata.resourceVersion, undefined],
      ],
    );
    assert.ok((await get(`${cms}/dcr-2`)).metadata.deletionTimestamp, 'the held one is terminating');
    ok(await c.raw('PATCH', `${cms}/dcr-2`, { body: '{"metadata":{"finalizers":null}}', headers: MERGE }), 200, 'release');
  });

  test('kubectl delete -l and --field-selector', async () => {
    await create(cms, cm('kdc-1', { labels: { kgrp: 'a' } }));
    await create(cms, cm('kdc-2', { labels: { kgrp: 'b' } }));
    assert.deepEqual(run(c.kubectl(['delete', 'configmap', '-l', 'kgrp=a'], { version: '1.33' })), { code: 0, stdout: 'configmap "kdc-1" deleted\n', stderr: '' });
    assert.deepEqual(run(c.kubectl(['delete', 'configmap', '--field-selector', 'metadata.name=kdc-2'], { version: '1.27' })), { code: 0, stdout: 'configmap "kdc-2" deleted\n', stderr: '' });
  });

  test('kubectl delete --wait=false of an object with a finalizer, then the finalizer removed by kubectl patch', async () => {
    await create(cms, cm('kfin', { finalizers: ['example.com/k'] }));
    assert.deepEqual(run(c.kubectl(['delete', 'configmap', 'kfin', '--wait=false'], { version: '1.33' })), { code: 0, stdout: 'configmap "kfin" deleted\n', stderr: '' });
    assert.ok((await get(`${cms}/kfin`)).metadata.deletionTimestamp);
    assert.deepEqual(run(c.kubectl(['patch', 'configmap', 'kfin', '--type', 'json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]'], { version: '1.33' })), {
      code: 0,
      stdout: 'configmap/kfin patched\n',
      stderr: '',
    });
    expectStatus(await c.raw('GET', `${cms}/kfin`), 404, 'NotFound', 'gone');
  });
});
