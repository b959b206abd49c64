// The CronJob controller of the embedded controller manager against a real keelson (the Job
// controller off: the tests write the Jobs' status themselves). Schedules of `@every 2s` keep the
// tests short: Kubernetes names a CronJob's Job by the minute of its scheduled time, so the ticks
// of one minute share a name.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, type Cluster } from './harness.js';

let c: Cluster;
const NS = 'cron';
const CJS = `/apis/batch/v1/namespaces/${NS}/cronjobs`;
const JOBS = `/apis/batch/v1/namespaces/${NS}/jobs`;
const MERGE = { 'content-type': 'application/merge-patch+json' };

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory', '--controllers=*,-job-controller'] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
});
after(async () => {
  await c?.stop();
});

const cronJob = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name },
  spec: { schedule: '@every 2s', jobTemplate: { metadata: { labels: { cron: name } }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } }, ...spec },
});

async function jobsOf(name: string): Promise<any[]> {
  return (await c.raw('GET', `${JOBS}?labelSelector=cron%3D${name}`)).json().items;
}

async function complete(job: any): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const status = { startTime: job.status?.startTime ?? now, completionTime: now, succeeded: 1, conditions: [{ type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: now }, { type: 'Complete', status: 'True', lastTransitionTime: now }] };
  const r = await c.raw('PATCH', `${JOBS}/${job.metadata.name}/status`, { body: JSON.stringify({ status }), headers: MERGE });
  assert.equal(r.status, 200, r.text);
}

async function eventsOf(name: string): Promise<any[]> {
  return (await c.raw('GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name%3D${name}`)).json().items;
}

test('a CronJob makes the Job of its scheduled time; a completed Job leaves status.active and sets lastSuccessfulTime', async () => {
  const made = c.kubectl(['create', 'cronjob', 'tick', '-n', NS, '--image=busybox', '--schedule=@every 2s']);
  assert.equal(made.code, 0, made.stderr);
  const cj = (await c.raw('GET', `${CJS}/tick`)).json();
  const job = await until('the first Job', async () => (await c.raw('GET', `${JOBS}`)).json().items.find((j: any) => j.metadata.ownerReferences?.[0]?.uid === cj.metadata.uid));
  assert.match(job.metadata.name, /^tick-\d{8}$/);
  const minute = Number(job.metadata.name.slice('tick-'.length));
  assert.ok(Math.abs(minute - Date.now() / 60000) < 2, job.metadata.name);
  assert.deepEqual(job.metadata.ownerReferences, [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'tick', uid: cj.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  assert.match(job.metadata.annotations['batch.kubernetes.io/cronjob-scheduled-timestamp'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$/);
  const st = await until('status.active', async () => {
    const s = (await c.raw('GET', `${CJS}/tick`)).json().status;
    return s?.active?.length === 1 && s.lastScheduleTime ? s : undefined;
  });
  assert.equal(st.active[0].name, job.metadata.name);
  assert.equal(st.active[0].kind, 'Job');
  const get = c.kubectl(['get', 'cronjob', 'tick', '-n', NS]);
  assert.match(get.stdout, /\ntick\s+@every 2s\s+<none>\s+False\s+1\s+\d+s\s+\d+s\n/);
  await complete(job);
  const done = await until('the completed Job seen', async () => {
    const s = (await c.raw('GET', `${CJS}/tick`)).json().status;
    return s?.lastSuccessfulTime ? s : undefined;
  });
  assert.ok(done.lastSuccessfulTime);
  const ev = await until('the events', async () => {
    const e = await eventsOf('tick');
    return e.some((x) => x.reason === 'SawCompletedJob') ? e : undefined;
  });
  const created = ev.find((x: any) => x.reason === 'SuccessfulCreate');
  assert.equal(created.message, `Created job ${job.metadata.name}`);
  assert.equal(created.source.component, 'cronjob-controller');
  assert.match(ev.find((x: any) => x.reason === 'SawCompletedJob').message, new RegExp(`^Saw completed job: ${job.metadata.name}, condition: Complete$`));
  // (its own new Job is never taken for an unexpected one, nor made twice)
  assert.ok(!ev.some((x: any) => x.reason === 'UnexpectedJob'), JSON.stringify(ev.map((x: any) => x.message)));
  assert.equal(c.kubectl(['delete', 'cronjob', 'tick', '-n', NS]).code, 0);
});

/**
 * A CronJob of `* * * * *` whose last run was two minutes ago and whose Job of then still runs
 * (made by hand): unsuspended, the controller is due for this minute's run at once.
 */
async function dueWithRunningJob(name: string, policy: string): Promise<{ cj: any; old: any }> {
  assert.equal((await c.raw('POST', CJS, { body: cronJob(name, { schedule: '* * * * *', concurrencyPolicy: policy, suspend: true }) })).status, 201);
  const cj = (await c.raw('GET', `${CJS}/${name}`)).json();
  const then = Math.floor(Date.now() / 60000) - 2;
  const job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: `${name}-${then}`, labels: { cron: name }, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name, uid: cj.metadata.uid, controller: true }] },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
  };
  const made = await c.raw('POST', JOBS, { body: job });
  assert.equal(made.status, 201, made.text);
  const old = made.json();
  const status = { lastScheduleTime: new Date(then * 60000).toISOString().replace('.000Z', 'Z'), active: [{ kind: 'Job', namespace: NS, name: old.metadata.name, uid: old.metadata.uid, apiVersion: 'batch/v1' }] };
  const st = await c.raw('PUT', `${CJS}/${name}/status`, { body: { ...cj, status } });
  assert.equal(st.status, 200, st.text);
  assert.equal((await c.raw('PATCH', `${CJS}/${name}`, { body: JSON.stringify({ spec: { suspend: false } }), headers: MERGE })).status, 200);
  return { cj, old };
}

test('concurrencyPolicy Forbid waits for the running Job (JobAlreadyActive); Replace deletes it first', async () => {
  const f = await dueWithRunningJob('forbid', 'Forbid');
  const ev = await until('JobAlreadyActive', async () => (await eventsOf('forbid')).find((e) => e.reason === 'JobAlreadyActive'));
  assert.equal(ev.message, 'Not starting job because prior execution is running and concurrency policy is Forbid');
  assert.deepEqual((await jobsOf('forbid')).map((j) => j.metadata.uid), [f.old.metadata.uid]);

  const r = await dueWithRunningJob('replace', 'Replace');
  const now = Math.floor(Date.now() / 60000);
  const fresh = await until('the Job of this minute', async () => (await jobsOf('replace')).find((j) => j.metadata.uid !== r.old.metadata.uid));
  assert.ok([now - 1, now, now + 1].map((m) => `replace-${m}`).includes(fresh.metadata.name), fresh.metadata.name);
  await until('the running Job deleted', async () => !(await jobsOf('replace')).some((j) => j.metadata.uid === r.old.metadata.uid));
  const evs = await eventsOf('replace');
  assert.ok(evs.some((e) => e.reason === 'SuccessfulDelete' && e.message === `Deleted job ${r.old.metadata.name}`), JSON.stringify(evs.map((e) => e.message)));
  const st = (await c.raw('GET', `${CJS}/replace`)).json().status;
  assert.deepEqual(st.active.map((a: any) => a.name), [fresh.metadata.name]);
});

test('a suspended CronJob makes no Job; finished Jobs beyond the history limits are deleted, the earliest first', async () => {
  assert.equal((await c.raw('POST', CJS, { body: cronJob('hist', { suspend: true, successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 }) })).status, 201);
  const cj = (await c.raw('GET', `${CJS}/hist`)).json();
  // three finished Jobs of this CronJob, made by hand at three start times
  for (const [i, kind] of [[1, 'Complete'], [2, 'Complete'], [3, 'Failed'], [4, 'Failed']] as const) {
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: `hist-${i}`, labels: { cron: 'hist-made' }, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'hist', uid: cj.metadata.uid, controller: true }] },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
    };
    assert.equal((await c.raw('POST', JOBS, { body: job })).status, 201);
    const t = new Date(Date.now() - (10 - i) * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const status = kind === 'Complete'
      ? { startTime: t, completionTime: t, succeeded: 1, conditions: [{ type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: t }, { type: 'Complete', status: 'True', lastTransitionTime: t }] }
      : { startTime: t, failed: 1, conditions: [{ type: 'FailureTarget', status: 'True', lastTransitionTime: t }, { type: 'Failed', status: 'True', lastTransitionTime: t, reason: 'BackoffLimitExceeded' }] };
    const r = await c.raw('PATCH', `${JOBS}/hist-${i}/status`, { body: JSON.stringify({ status }), headers: MERGE });
    assert.equal(r.status, 200, r.text);
  }
  const left = await until('two Jobs left', async () => {
    const names = (await jobsOf('hist-made')).filter((j) => !j.metadata.deletionTimestamp).map((j) => j.metadata.name).sort();
    return names.length === 2 ? names : undefined;
  });
  assert.deepEqual(left, ['hist-2', 'hist-4']);
  await new Promise((r) => setTimeout(r, 2500));
  assert.equal((await jobsOf('hist')).length, 0, 'suspended: no Job of its own');
});
