// The Job and TTL-after-finished controllers of the embedded controller manager, against a real
// keelson driven by kubectl and raw HTTPS: pods made from the template with the job-tracking
// finalizer (removed once counted), completion, parallelism and completions, the backoff limit
// and the active deadline (FailureTarget, then Failed), suspend and resume, Indexed Jobs, and a
// finished Job deleted after its TTL. No node agent runs: the tests move pods through their
// phases through the status subresource.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, type Cluster } from './harness.js';

let c: Cluster;
const NS = 'jobs';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const JOBS = `/apis/batch/v1/namespaces/${NS}/jobs`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const FINALIZER = 'batch.kubernetes.io/job-tracking';

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory'] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
});
after(async () => {
  await c?.stop();
});

const job = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name },
  spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } }, ...spec },
});

async function createJob(body: any): Promise<any> {
  const r = await c.raw('POST', JOBS, { body });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

/** the pods of a Job not being deleted */
async function podsOf(name: string, all = false): Promise<any[]> {
  const r = await c.raw('GET', `${PODS}?labelSelector=batch.kubernetes.io%2Fjob-name%3D${name}`);
  assert.equal(r.status, 200, r.text);
  return r.json().items.filter((p: any) => all || !p.metadata.deletionTimestamp);
}

async function untilPods(name: string, n: number, pred: (p: any) => boolean = () => true): Promise<any[]> {
  return until(`${n} pods of ${name}`, async () => {
    const pods = (await podsOf(name)).filter(pred);
    return pods.length === n ? pods : undefined;
  });
}

async function setPhase(pod: any, phase: string, ready = false): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const status: any = { phase };
  if (phase === 'Running') status.conditions = [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: now }];
  const r = await c.raw('PATCH', `${PODS}/${pod.metadata.name}/status`, { body: JSON.stringify({ status }), headers: MERGE });
  assert.equal(r.status, 200, r.text);
}

async function statusOf(name: string, want: (s: any) => boolean, timeoutMs = 30_000): Promise<any> {
  let last: any;
  try {
    return await until(
      `the status of job ${name}`,
      async () => {
        const o = (await c.raw('GET', `${JOBS}/${name}`)).json();
        last = o.status;
        return want(o.status ?? {}) ? o.status : undefined;
      },
      timeoutMs,
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; the last: ${JSON.stringify(last)}`);
  }
}

const cond = (s: any, type: string): any => (s.conditions ?? []).find((x: any) => x.type === type);
const types = (s: any): string[] => (s.conditions ?? []).filter((x: any) => x.status === 'True').map((x: any) => x.type);

async function eventsOf(name: string): Promise<any[]> {
  const r = await c.raw('GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name%3D${name}`);
  return r.json().items;
}

async function untilEvent(name: string, reason: string): Promise<any> {
  return until(`event ${reason} of ${name}`, async () => (await eventsOf(name)).find((e) => e.reason === reason));
}

/** the pod still there (a pod without finalizers is gone once deleted) */
async function podByName(name: string): Promise<any> {
  const r = await c.raw('GET', `${PODS}/${name}`);
  return r.status === 200 ? r.json() : undefined;
}

test('kubectl create job: a pod with the Job labels, owner and tracking finalizer; it succeeds and the Job completes', async () => {
  const made = c.kubectl(['create', 'job', 'hello', '--image=busybox', '-n', NS]);
  assert.equal(made.code, 0, made.stderr);
  const [pod] = await untilPods('hello', 1);
  const owner = (await c.raw('GET', `${JOBS}/hello`)).json();
  const uid = owner.metadata.uid;
  assert.match(pod.metadata.name, /^hello-[a-z0-9]{5}$/);
  assert.deepEqual(pod.metadata.labels, {
    'batch.kubernetes.io/controller-uid': uid,
    'batch.kubernetes.io/job-name': 'hello',
    'controller-uid': uid,
    'job-name': 'hello',
  });
  assert.deepEqual(pod.metadata.ownerReferences, [{ apiVersion: 'batch/v1', kind: 'Job', name: 'hello', uid, controller: true, blockOwnerDeletion: true }]);
  assert.deepEqual(pod.metadata.finalizers, [FINALIZER]);
  let s = await statusOf('hello', (s) => s.active === 1 && s.ready === 0 && s.terminating === 0 && !!s.startTime);
  assert.deepEqual(s.uncountedTerminatedPods, {});
  assert.equal(s.succeeded, undefined);
  const running = c.kubectl(['get', 'jobs', 'hello', '-n', NS]);
  assert.match(running.stdout, /^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\n/);
  assert.match(running.stdout, /\nhello\s+Running\s+0\/1\s+\d+s\s+\d+s\n/);

  await setPhase(pod, 'Running', true);
  await statusOf('hello', (s) => s.active === 1 && s.ready === 1);
  await setPhase(pod, 'Succeeded');
  s = await statusOf('hello', (s) => types(s).includes('Complete'));
  assert.deepEqual(types(s), ['SuccessCriteriaMet', 'Complete']);
  for (const t of ['SuccessCriteriaMet', 'Complete']) {
    assert.equal(cond(s, t).reason, 'CompletionsReached');
    assert.equal(cond(s, t).message, 'Reached expected number of succeeded pods');
  }
  assert.equal(s.succeeded, 1);
  assert.equal(s.active, undefined);
  assert.equal(s.ready, 0);
  assert.equal(s.completionTime, cond(s, 'Complete').lastTransitionTime);
  assert.deepEqual(s.uncountedTerminatedPods, {});
  // the counted pod lost its finalizer
  const counted = await podByName(pod.metadata.name);
  assert.equal(counted.metadata.finalizers, undefined);

  const get = c.kubectl(['get', 'jobs', '-n', NS]);
  assert.match(get.stdout, /\nhello\s+Complete\s+1\/1\s+\d+s\s+\d+s\n/);
  const old = c.kubectl(['get', 'job', 'hello', '-n', NS], { version: '1.27' });
  assert.equal(old.code, 0, old.stderr);
  assert.match(old.stdout, /\nhello\s+Complete\s+1\/1\s+\d+s\s+\d+s\n/);
  const wait = c.kubectl(['wait', '--for=condition=complete', 'job/hello', '-n', NS, '--timeout=20s']);
  assert.equal(wait.code, 0, wait.stderr);
  assert.match(wait.stdout, /job\.batch\/hello condition met/);

  const created = await untilEvent('hello', 'SuccessfulCreate');
  assert.equal(created.message, `Created pod: ${pod.metadata.name}`);
  assert.equal(created.source.component, 'job-controller');
  assert.equal(created.involvedObject.kind, 'Job');
  const completed = await untilEvent('hello', 'Completed');
  assert.equal(completed.message, 'Job completed');
  assert.equal(completed.type, 'Normal');
});

test('parallelism 2, completions 3: two pods at a time, a third after a success, complete at 3/3', async () => {
  await createJob(job('par', { parallelism: 2, completions: 3 }));
  const first = await untilPods('par', 2);
  await statusOf('par', (s) => s.active === 2);
  await setPhase(first[0], 'Succeeded');
  // one left to run with one running: only one more pod
  const next = await untilPods('par', 2, (p) => p.status?.phase !== 'Succeeded');
  await statusOf('par', (s) => s.active === 2 && s.succeeded === 1);
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal((await podsOf('par')).length, 3, 'no more than the completions left');
  for (const p of next) await setPhase(p, 'Succeeded');
  const s = await statusOf('par', (s) => types(s).includes('Complete'));
  assert.equal(s.succeeded, 3);
  assert.equal((await podsOf('par')).length, 3);
  assert.match(c.kubectl(['get', 'job', 'par', '-n', NS]).stdout, /\npar\s+Complete\s+3\/3\s+/);
});

test('backoffLimit: failed pods are replaced after the backoff, then the Job fails with BackoffLimitExceeded', async () => {
  await createJob(job('flaky', { backoffLimit: 1 }));
  const [p1] = await untilPods('flaky', 1);
  await setPhase(p1, 'Failed');
  await statusOf('flaky', (s) => s.failed === 1);
  // the replacement waits for the pod failure backoff (10 s after the first failure)
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal((await podsOf('flaky')).filter((p) => p.status?.phase !== 'Failed').length, 0, 'no replacement within the backoff');
  const [p2] = await until('the replacement', async () => {
    const pods = (await podsOf('flaky')).filter((p) => p.status?.phase !== 'Failed');
    return pods.length === 1 ? pods : undefined;
  }, 20_000);
  assert.notEqual(p2.metadata.name, p1.metadata.name);
  await setPhase(p2, 'Failed');
  const s = await statusOf('flaky', (s) => types(s).includes('Failed'));
  assert.deepEqual(types(s), ['FailureTarget', 'Failed']);
  for (const t of ['FailureTarget', 'Failed']) {
    assert.equal(cond(s, t).reason, 'BackoffLimitExceeded');
    assert.equal(cond(s, t).message, 'Job has reached the specified backoff limit');
  }
  assert.equal(s.failed, 2);
  assert.equal(s.completionTime, undefined);
  for (const p of await podsOf('flaky')) assert.equal(p.metadata.finalizers, undefined, `${p.metadata.name} keeps no finalizer`);
  const ev = await untilEvent('flaky', 'BackoffLimitExceeded');
  assert.equal(ev.type, 'Warning');
  assert.equal(ev.message, 'Job has reached the specified backoff limit');
  assert.match(c.kubectl(['get', 'job', 'flaky', '-n', NS]).stdout, /\nflaky\s+Failed\s+0\/1\s+/);
  const wait = c.kubectl(['wait', '--for=condition=failed', 'job/flaky', '-n', NS, '--timeout=10s']);
  assert.equal(wait.code, 0, wait.stderr);
});

test('activeDeadlineSeconds: the running pods are deleted and the Job fails with DeadlineExceeded', async () => {
  await createJob(job('slow', { activeDeadlineSeconds: 2, parallelism: 2, completions: 4 }));
  const pods = await untilPods('slow', 2);
  await setPhase(pods[0], 'Running', true);
  const s = await statusOf('slow', (s) => types(s).includes('Failed'), 20_000);
  assert.deepEqual(types(s), ['FailureTarget', 'Failed']);
  assert.equal(cond(s, 'Failed').reason, 'DeadlineExceeded');
  assert.equal(cond(s, 'Failed').message, 'Job was active longer than specified deadline');
  assert.equal(s.failed, 2, 'the deleted pods count as failed');
  assert.equal(s.active, undefined);
  assert.equal(s.ready, 0);
  assert.equal(s.terminating, 0);
  await until('the pods gone', async () => (await podsOf('slow', true)).length === 0);
  const ev = await untilEvent('slow', 'DeadlineExceeded');
  assert.equal(ev.message, 'Job was active longer than specified deadline');
  await untilEvent('slow', 'SuccessfulDelete');
});

test('suspend and resume: no pods while suspended, the Suspended condition and events', async () => {
  await createJob(job('sus', { suspend: true }));
  let s = await statusOf('sus', (s) => cond(s, 'Suspended')?.status === 'True');
  assert.equal(cond(s, 'Suspended').reason, 'JobSuspended');
  assert.equal(cond(s, 'Suspended').message, 'Job suspended');
  assert.equal(s.startTime, undefined, 'a suspended Job has not started');
  assert.equal((await podsOf('sus')).length, 0);
  assert.match(c.kubectl(['get', 'job', 'sus', '-n', NS]).stdout, /\nsus\s+Suspended\s+0\/1\s+/);
  await untilEvent('sus', 'Suspended');

  assert.equal(c.kubectl(['patch', 'job', 'sus', '-n', NS, '--type=merge', '-p', '{"spec":{"suspend":false}}']).code, 0);
  const [pod] = await untilPods('sus', 1);
  s = await statusOf('sus', (s) => cond(s, 'Suspended')?.status === 'False' && s.active === 1);
  assert.equal(cond(s, 'Suspended').reason, 'JobResumed');
  assert.equal(cond(s, 'Suspended').message, 'Job resumed');
  assert.ok(s.startTime);
  await untilEvent('sus', 'Resumed');

  assert.equal(c.kubectl(['patch', 'job', 'sus', '-n', NS, '--type=merge', '-p', '{"spec":{"suspend":true}}']).code, 0);
  s = await statusOf('sus', (s) => cond(s, 'Suspended')?.status === 'True' && !s.active);
  await until('the pod gone', async () => !(await podByName(pod.metadata.name)));
  s = await statusOf('sus', (s) => s.terminating === 0);
  assert.equal(s.failed, undefined, 'pods deleted on suspend do not count as failed');
  assert.equal(cond(s, 'Suspended').reason, 'JobSuspended');
});

test('Indexed: one pod per index with its annotation, label, hostname and name; completedIndexes as intervals', async () => {
  await createJob(job('idx', { completionMode: 'Indexed', completions: 4, parallelism: 3 }));
  const pods = await untilPods('idx', 3);
  const byIndex = new Map<number, any>();
  for (const p of pods) {
    const ix = p.metadata.annotations['batch.kubernetes.io/job-completion-index'];
    assert.equal(p.metadata.labels['batch.kubernetes.io/job-completion-index'], ix);
    assert.equal(p.spec.hostname, `idx-${ix}`);
    assert.match(p.metadata.name, new RegExp(`^idx-${ix}-[a-z0-9]{5}$`));
    const env = p.spec.containers[0].env.find((e: any) => e.name === 'JOB_COMPLETION_INDEX');
    assert.ok(env?.valueFrom?.fieldRef?.fieldPath?.includes('batch.kubernetes.io/job-completion-index'));
    byIndex.set(Number(ix), p);
  }
  assert.deepEqual([...byIndex.keys()].sort(), [0, 1, 2]);
  await setPhase(byIndex.get(0), 'Succeeded');
  await setPhase(byIndex.get(2), 'Succeeded');
  let s = await statusOf('idx', (s) => s.completedIndexes === '0,2' && s.succeeded === 2);
  const [p3] = await untilPods('idx', 1, (p) => p.metadata.annotations['batch.kubernetes.io/job-completion-index'] === '3');
  await setPhase(p3, 'Succeeded');
  s = await statusOf('idx', (s) => s.completedIndexes === '0,2-3');
  // a failed index is run again
  await setPhase(byIndex.get(1), 'Failed');
  const [again] = await until('index 1 again', async () => {
    const ps = (await podsOf('idx')).filter((p) => p.metadata.annotations['batch.kubernetes.io/job-completion-index'] === '1' && p.status?.phase !== 'Failed');
    return ps.length === 1 ? ps : undefined;
  }, 20_000);
  await setPhase(again, 'Succeeded');
  s = await statusOf('idx', (s) => types(s).includes('Complete'));
  assert.equal(s.completedIndexes, '0-3');
  assert.equal(s.succeeded, 4);
  assert.equal(s.failed, 1);
});

test('podFailurePolicy: a FailJob exit code fails the Job at once; an Ignore condition does not count', async () => {
  const policy = {
    rules: [
      { action: 'FailJob', onExitCodes: { containerName: 'c', operator: 'In', values: [42] } },
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] },
    ],
  };
  await createJob(job('pfp', { backoffLimit: 0, podFailurePolicy: policy }));
  const [pod] = await untilPods('pfp', 1);
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const status = {
    phase: 'Failed',
    containerStatuses: [{ name: 'c', image: 'busybox', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 42, reason: 'Error', startedAt: now, finishedAt: now } } }],
  };
  assert.equal((await c.raw('PATCH', `${PODS}/${pod.metadata.name}/status`, { body: JSON.stringify({ status }), headers: MERGE })).status, 200);
  const s = await statusOf('pfp', (s) => types(s).includes('Failed'));
  assert.deepEqual(types(s), ['FailureTarget', 'Failed']);
  assert.equal(cond(s, 'Failed').reason, 'PodFailurePolicy');
  assert.equal(cond(s, 'Failed').message, `Container c for pod ${NS}/${pod.metadata.name} failed with exit code 42 matching FailJob rule at index 0`);
  assert.equal(s.failed, 1);

  await createJob(job('pfi', { backoffLimit: 0, podFailurePolicy: policy }));
  const [p1] = await untilPods('pfi', 1);
  const disrupted = { phase: 'Failed', conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', lastTransitionTime: now }] };
  assert.equal((await c.raw('PATCH', `${PODS}/${p1.metadata.name}/status`, { body: JSON.stringify({ status: disrupted }), headers: MERGE })).status, 200);
  await until('a replacement', async () => (await podsOf('pfi')).some((p) => p.metadata.name !== p1.metadata.name), 20_000);
  const si = (await c.raw('GET', `${JOBS}/pfi`)).json().status;
  assert.equal(si.failed, undefined, 'an ignored failure is not counted');
  assert.deepEqual(types(si), []);
  assert.equal((await podByName(p1.metadata.name)).metadata.finalizers, undefined);
});

test('successPolicy: an Indexed Job whose rule is met succeeds with its other pods deleted', async () => {
  await createJob(job('leader', { completionMode: 'Indexed', completions: 3, parallelism: 3, successPolicy: { rules: [{ succeededIndexes: '0' }] } }));
  const pods = await untilPods('leader', 3);
  const leader = pods.find((p) => p.metadata.annotations['batch.kubernetes.io/job-completion-index'] === '0');
  await setPhase(leader, 'Succeeded');
  const s = await statusOf('leader', (s) => types(s).includes('Complete'));
  assert.deepEqual(types(s), ['SuccessCriteriaMet', 'Complete']);
  for (const t of ['SuccessCriteriaMet', 'Complete']) {
    assert.equal(cond(s, t).reason, 'SuccessPolicy');
    assert.equal(cond(s, t).message, 'Matched rules at index 0');
  }
  assert.equal(s.completedIndexes, '0');
  assert.equal(s.succeeded, 1);
  assert.equal(s.failed, undefined, 'the pods deleted on success are not failures');
  await until('the other pods gone', async () => (await podsOf('leader', true)).length === 1);
});

test('backoffLimitPerIndex: an index runs again with its failure count until it fails; the Job fails with FailedIndexes', async () => {
  await createJob(job('per', { completionMode: 'Indexed', completions: 3, parallelism: 3, backoffLimitPerIndex: 1 }));
  const ixOf = (p: any) => p.metadata.annotations['batch.kubernetes.io/job-completion-index'];
  const pods = await untilPods('per', 3);
  for (const p of pods) assert.equal(p.metadata.annotations['batch.kubernetes.io/job-index-failure-count'], '0');
  const first = pods.find((p) => ixOf(p) === '1');
  await setPhase(first, 'Failed');
  // (not counted yet: the failed pod waits, finalizer kept, for the pod that runs its index again)
  await statusOf('per', (s) => s.active === 2 && s.failedIndexes === '' && s.failed === undefined);
  const [again] = await until('index 1 again', async () => {
    const ps = (await podsOf('per')).filter((p) => ixOf(p) === '1' && p.status?.phase !== 'Failed');
    return ps.length === 1 ? ps : undefined;
  }, 20_000);
  assert.equal(again.metadata.annotations['batch.kubernetes.io/job-index-failure-count'], '1');
  // the failed pod kept its finalizer until its replacement carried the count
  await until('the first pod released', async () => (await podByName(first.metadata.name))?.metadata?.finalizers === undefined);
  await statusOf('per', (s) => s.failed === 1 && s.active === 3);
  await setPhase(again, 'Failed');
  await statusOf('per', (s) => s.failedIndexes === '1' && s.failed === 2);
  for (const p of pods.filter((p) => ixOf(p) !== '1')) await setPhase(p, 'Succeeded');
  const s = await statusOf('per', (s) => types(s).includes('Failed'));
  assert.deepEqual(types(s), ['FailureTarget', 'Failed']);
  assert.equal(cond(s, 'Failed').reason, 'FailedIndexes');
  assert.equal(cond(s, 'Failed').message, 'Job has failed indexes');
  assert.equal(s.completedIndexes, '0,2');
  assert.equal(s.failedIndexes, '1');
  assert.equal(s.succeeded, 2);
});

test('ttlSecondsAfterFinished: a finished Job is deleted after its TTL, its pods with it (the garbage collector, in the foreground)', async () => {
  await createJob(job('short', { ttlSecondsAfterFinished: 2 }));
  const [pod] = await untilPods('short', 1);
  await setPhase(pod, 'Succeeded');
  const s = await statusOf('short', (s) => types(s).includes('Complete'));
  const finished = Date.parse(cond(s, 'Complete').lastTransitionTime);
  await until('the Job deleted', async () => (await c.raw('GET', `${JOBS}/short`)).status === 404, 20_000);
  assert.ok(Date.now() >= finished + 2000, 'not before its TTL');
  // (Foreground: the collector deletes the pod before the Job goes)
  const left = await podByName(pod.metadata.name);
  assert.ok(!left || left.metadata.deletionTimestamp, `the pod is deleted with the Job: ${JSON.stringify(left?.metadata)}`);
});

test('a Job deleted while it runs (the API default: its pods orphaned): the pods stay, without owner or tracking finalizer', async () => {
  await createJob(job('gone', { parallelism: 2, completions: 2 }));
  const pods = await untilPods('gone', 2);
  assert.equal((await c.raw('DELETE', `${JOBS}/gone`)).status, 200);
  await until('the Job gone', async () => (await c.raw('GET', `${JOBS}/gone`)).status === 404, 20_000);
  for (const p of pods) {
    const cur = await until(`${p.metadata.name} without the finalizer`, async () => {
      const cur = await podByName(p.metadata.name);
      assert.ok(cur, `the orphaned pod ${p.metadata.name} stays`);
      return !(cur.metadata.finalizers ?? []).includes(FINALIZER) ? cur : undefined;
    });
    assert.equal(cur.metadata.ownerReferences, undefined, 'the collector orphaned it');
    assert.equal(cur.metadata.deletionTimestamp, undefined);
  }
});

test('a Job deleted in the background while it runs: its pods lose the tracking finalizer and go', async () => {
  await createJob(job('gone-bg', { parallelism: 2, completions: 2 }));
  const pods = await untilPods('gone-bg', 2);
  assert.equal((await c.raw('DELETE', `${JOBS}/gone-bg?propagationPolicy=Background`)).status, 200);
  // (not scheduled: once the finalizer goes, the deleted pod goes at once)
  for (const p of pods) await until(`${p.metadata.name} gone`, async () => !(await podByName(p.metadata.name)), 20_000);
});
