// The deployment controller of the embedded controller manager, with the ReplicaSet controller,
// against a real keelson driven by kubectl: the new ReplicaSet of a template (name, hash label,
// annotations), rollouts within maxSurge/maxUnavailable, rollout status/history/undo/pause/resume,
// scaling (proportional in the middle of a rollout), Recreate waiting for the old pods, the
// progress deadline, revisionHistoryLimit, adoption and release of ReplicaSets. No node agent
// runs: the tests write the pods' readiness through the status subresource.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, type Cluster } from './harness.js';

let c: Cluster;
const NS = 'dc';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const RSS = `/apis/apps/v1/namespaces/${NS}/replicasets`;
const DEPLOYS = `/apis/apps/v1/namespaces/${NS}/deployments`;
const MERGE = { 'content-type': 'application/merge-patch+json' };

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory'] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
});
after(async () => {
  await Promise.all([...kubelets].map((k) => k.stop()));
  await c?.stop();
});

function kubectl(args: string[]): string {
  const r = c.kubectl([...args, '-n', NS]);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function get(path: string): Promise<any> {
  const r = await c.raw('GET', path);
  assert.equal(r.status, 200, r.text);
  return r.json();
}

/** the pods with label app=<app>, not being deleted */
async function podsOf(app: string): Promise<any[]> {
  return (await get(`${PODS}?labelSelector=app%3D${app}`)).items.filter((p: any) => !p.metadata.deletionTimestamp);
}

/** the ReplicaSets with label app=<app>, oldest first */
async function rssOf(app: string): Promise<any[]> {
  const items = (await get(`${RSS}?labelSelector=app%3D${app}`)).items;
  return items.sort((a: any, b: any) => Number(a.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? 0) - Number(b.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? 0));
}

const isReady = (p: any) => (p.status?.conditions ?? []).some((x: any) => x.type === 'Ready' && x.status === 'True');

async function markReady(pod: any): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const status = { phase: 'Running', podIP: '10.0.0.9', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }] };
  const r = await c.raw('PATCH', `${PODS}/${pod.metadata.name}/status`, { body: JSON.stringify({ status }), headers: MERGE });
  assert.ok(r.status === 200 || r.status === 404, r.text);
}

/** marks every pod of the app Ready (what a kubelet would do), once */
async function readyAll(app: string, only?: (p: any) => boolean): Promise<number> {
  let n = 0;
  for (const p of await podsOf(app)) {
    if (isReady(p) || (only && !only(p))) continue;
    await markReady(p);
    n++;
  }
  return n;
}

/** the kubelet loops still running (a failed test's are stopped before the cluster) */
const kubelets = new Set<{ stop(): Promise<void> }>();

/** keeps marking the app's pods Ready until stopped */
function kubelet(app: string): { stop(): Promise<void> } {
  let running = true;
  const loop = (async () => {
    while (running) {
      await readyAll(app).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const k = {
    async stop() {
      running = false;
      kubelets.delete(k);
      await loop;
    },
  };
  kubelets.add(k);
  return k;
}

async function deploymentWhere(name: string, want: (d: any) => boolean, timeoutMs = 30_000): Promise<any> {
  let last: any;
  try {
    return await until(
      `deployment ${name}`,
      async () => {
        last = await get(`${DEPLOYS}/${name}`);
        return want(last) ? last : undefined;
      },
      timeoutMs,
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; the last: ${JSON.stringify({ metadata: last?.metadata?.annotations, spec: last?.spec?.replicas, status: last?.status })}`);
  }
}

const cond = (d: any, type: string) => (d.status?.conditions ?? []).find((x: any) => x.type === type);

async function eventsOf(name: string): Promise<any[]> {
  return (await get(`/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name%3D${name}`)).items;
}

test('kubectl create deployment: the new ReplicaSet, its pods, the status, rollout status, get and the events', async () => {
  kubectl(['create', 'deployment', 'web', '--image=nginx', '--replicas=3']);
  const [rs] = await until('the ReplicaSet of web', async () => {
    const l = await rssOf('web');
    return l.length === 1 ? l : undefined;
  });
  const d0 = await get(`${DEPLOYS}/web`);
  const hash = rs.metadata.labels['pod-template-hash'];
  assert.match(hash, /^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
  assert.equal(rs.metadata.name, `web-${hash}`);
  assert.deepEqual(rs.metadata.labels, { app: 'web', 'pod-template-hash': hash });
  assert.deepEqual(rs.spec.selector, { matchLabels: { app: 'web', 'pod-template-hash': hash } });
  assert.deepEqual(rs.spec.template.metadata.labels, { app: 'web', 'pod-template-hash': hash });
  assert.equal(rs.spec.replicas, 3);
  assert.deepEqual(rs.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: d0.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  assert.equal(rs.metadata.annotations['deployment.kubernetes.io/revision'], '1');
  assert.equal(rs.metadata.annotations['deployment.kubernetes.io/desired-replicas'], '3');
  assert.equal(rs.metadata.annotations['deployment.kubernetes.io/max-replicas'], '4');
  await until('3 pods of web', async () => ((await podsOf('web')).length === 3 ? true : undefined));
  const waiting = await deploymentWhere('web', (d) => d.status?.replicas === 3);
  assert.equal(waiting.metadata.annotations['deployment.kubernetes.io/revision'], '1');
  assert.equal(cond(waiting, 'Available').status, 'False');
  assert.equal(cond(waiting, 'Available').reason, 'MinimumReplicasUnavailable');
  assert.equal(cond(waiting, 'Available').message, 'Deployment does not have minimum availability.');
  // rollout status waits for the pods, which the test makes ready
  const status = c.kubectlAsync(['rollout', 'status', 'deployment/web', '-n', NS, '--timeout=60s']);
  await new Promise((r) => setTimeout(r, 500));
  await readyAll('web');
  const st = await status;
  assert.equal(st.code, 0, st.stderr);
  assert.match(st.stdout, /deployment "web" successfully rolled out/);
  const d = await deploymentWhere('web', (x) => x.status?.availableReplicas === 3);
  assert.equal(d.status.observedGeneration, d.metadata.generation);
  assert.equal(d.status.replicas, 3);
  assert.equal(d.status.updatedReplicas, 3);
  assert.equal(d.status.readyReplicas, 3);
  assert.equal(d.status.unavailableReplicas, undefined);
  assert.deepEqual(
    d.status.conditions.map((x: any) => [x.type, x.status, x.reason, x.message]),
    // (a condition set anew goes to the end: Progressing moved behind Available as it progressed)
    [
      ['Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'],
      ['Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${rs.metadata.name}" has successfully progressed.`],
    ],
  );
  assert.match(kubectl(['get', 'deploy', 'web']), /\nweb\s+3\/3\s+3\s+3\s+\d+s\n/);
  const ev = (await eventsOf('web')).find((e) => e.reason === 'ScalingReplicaSet');
  assert.equal(ev?.message, `Scaled up replica set ${rs.metadata.name} from 0 to 3`);
  assert.equal(ev.source.component, 'deployment-controller');
  assert.equal(ev.involvedObject.kind, 'Deployment');
});

test('kubectl set image rolls out within maxSurge and maxUnavailable; rollout history and undo', async () => {
  await deploymentWhere('web', (x) => x.status?.availableReplicas === 3);
  // 25% of 3: a surge of 1 (rounded up), none unavailable (rounded down)
  let worst = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const total = (await rssOf('web')).reduce((n, r) => n + r.spec.replicas, 0);
      worst = Math.max(worst, total);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  kubectl(['set', 'image', 'deployment/web', 'nginx=nginx:1.25']);
  const k = kubelet('web');
  const st = await c.kubectlAsync(['rollout', 'status', 'deployment/web', '-n', NS, '--timeout=60s']);
  await k.stop();
  sampling = false;
  await sampler;
  assert.equal(st.code, 0, st.stderr);
  assert.ok(worst <= 4, `at most 3 + 1 replicas at once, saw ${worst}`);
  const [old, cur] = await rssOf('web');
  assert.equal(old.spec.replicas, 0);
  assert.equal(cur.spec.replicas, 3);
  assert.equal(cur.metadata.annotations['deployment.kubernetes.io/revision'], '2');
  assert.equal(cur.spec.template.spec.containers[0].image, 'nginx:1.25');
  const history = kubectl(['rollout', 'history', 'deployment/web']);
  assert.match(history, /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>\n/);
  // undo: kubectl patches the template of revision 1 back in; its ReplicaSet becomes the new one again
  const undo = kubectl(['rollout', 'undo', 'deployment/web']);
  assert.match(undo, /deployment.apps\/web rolled back/);
  const k2 = kubelet('web');
  const st2 = await c.kubectlAsync(['rollout', 'status', 'deployment/web', '-n', NS, '--timeout=60s']);
  await k2.stop();
  assert.equal(st2.code, 0, st2.stderr);
  const after = await rssOf('web');
  assert.equal(after.length, 2);
  const back = after.find((r) => r.metadata.uid === old.metadata.uid)!;
  assert.equal(back.spec.replicas, 3);
  assert.equal(back.metadata.annotations['deployment.kubernetes.io/revision'], '3');
  assert.equal(back.metadata.annotations['deployment.kubernetes.io/revision-history'], '1');
  const d = await deploymentWhere('web', (x) => x.metadata.annotations?.['deployment.kubernetes.io/revision'] === '3' && x.status?.updatedReplicas === 3 && x.status?.replicas === 3);
  assert.equal(d.spec.template.spec.containers[0].image, 'nginx');
  assert.match(kubectl(['rollout', 'history', 'deployment/web']), /\n2\s+<none>\n3\s+<none>\n/);
  const messages = (await eventsOf('web')).filter((e) => e.reason === 'ScalingReplicaSet').map((e) => e.message);
  assert.ok(messages.includes(`Scaled down replica set ${old.metadata.name} from 3 to 2`) || messages.includes(`Scaled down replica set ${old.metadata.name} from 3 to 0`), messages.join('\n'));
  assert.ok(messages.includes(`Scaled up replica set ${cur.metadata.name} from 0 to 1`), messages.join('\n'));
});

test('kubectl rollout pause/resume and kubectl scale', async () => {
  kubectl(['rollout', 'pause', 'deployment/web']);
  const paused = await deploymentWhere('web', (x) => cond(x, 'Progressing')?.reason === 'DeploymentPaused');
  assert.equal(cond(paused, 'Progressing').status, 'Unknown');
  assert.equal(cond(paused, 'Progressing').message, 'Deployment is paused');
  kubectl(['set', 'image', 'deployment/web', 'nginx=nginx:1.26']);
  // the spec is observed, but nothing rolls out
  const seen = await deploymentWhere('web', (x) => x.status?.observedGeneration === x.metadata.generation);
  assert.equal(seen.spec.template.spec.containers[0].image, 'nginx:1.26');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await rssOf('web')).length, 2);
  // a paused Deployment still scales
  kubectl(['scale', 'deployment/web', '--replicas=5']);
  await until('web scaled to 5 while paused', async () => (await rssOf('web')).some((r) => r.spec.replicas === 5));
  const k = kubelet('web');
  try {
    await deploymentWhere('web', (x) => x.status?.availableReplicas === 5);
    // (none up to date: the paused template has no ReplicaSet yet)
    assert.match(kubectl(['get', 'deploy', 'web']), /\nweb\s+5\/5\s+0\s+5\s+\d+s\n/);
    kubectl(['rollout', 'resume', 'deployment/web']);
    const resumed = await deploymentWhere('web', (x) => cond(x, 'Progressing')?.reason !== 'DeploymentPaused');
    assert.ok(['DeploymentResumed', 'NewReplicaSetCreated', 'ReplicaSetUpdated'].includes(cond(resumed, 'Progressing').reason), JSON.stringify(resumed.status));
    const st = await c.kubectlAsync(['rollout', 'status', 'deployment/web', '-n', NS, '--timeout=60s']);
    assert.equal(st.code, 0, st.stderr);
    const done = await deploymentWhere('web', (x) => cond(x, 'Progressing')?.reason === 'NewReplicaSetAvailable' && x.status?.updatedReplicas === 5 && x.status?.replicas === 5);
    assert.equal(done.metadata.annotations['deployment.kubernetes.io/revision'], '4');
    assert.match(kubectl(['get', 'deploy', 'web']), /\nweb\s+5\/5\s+5\s+5\s+\d+s\n/);
    kubectl(['scale', 'deployment/web', '--replicas=2']);
    await deploymentWhere('web', (x) => x.status?.replicas === 2 && x.status?.availableReplicas === 2);
  } finally {
    await k.stop();
  }
  assert.match(kubectl(['get', 'deploy', 'web']), /\nweb\s+2\/2\s+2\s+2\s+\d+s\n/);
});

const deployment = (name: string, replicas: number, spec: Record<string, unknown> = {}, image = 'nginx') => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image }] } }, ...spec },
});

async function create(obj: any): Promise<void> {
  const r = await c.raw('POST', DEPLOYS, { body: obj });
  assert.equal(r.status, 201, r.text);
}

test('scaling in the middle of a rollout scales the ReplicaSets proportionally', async () => {
  await create(deployment('prop', 10, { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 3, maxUnavailable: 2 } } }));
  const k = kubelet('prop');
  await deploymentWhere('prop', (x) => x.status?.availableReplicas === 10);
  await k.stop();
  // the new pods never become ready: the rollout stops at 8 old and 5 new
  kubectl(['set', 'image', 'deployment/prop', 'c=nginx:2']);
  await until('the rollout of prop stuck at 8 + 5', async () => {
    const l = await rssOf('prop');
    return l.length === 2 && l[0].spec.replicas === 8 && l[1].spec.replicas === 5 ? l : undefined;
  });
  kubectl(['scale', 'deployment/prop', '--replicas=15']);
  // 5 more within 15 + 3: the old one 8 * 18/13 -> 11, the new one 5 * 18/13 -> 7
  const [old, cur] = await until('prop scaled proportionally', async () => {
    const l = await rssOf('prop');
    return l[0].spec.replicas + l[1].spec.replicas === 18 ? l : undefined;
  });
  assert.equal(old.spec.replicas, 11);
  assert.equal(cur.spec.replicas, 7);
  assert.equal(old.metadata.annotations['deployment.kubernetes.io/desired-replicas'], '15');
  assert.equal(cur.metadata.annotations['deployment.kubernetes.io/max-replicas'], '18');
});

test('Recreate: the old ReplicaSet goes to 0, the new one waits until the old pods are gone', async () => {
  await create(deployment('rec', 2, { strategy: { type: 'Recreate' } }));
  await until('2 pods of rec', async () => ((await podsOf('rec')).length === 2 ? true : undefined));
  await readyAll('rec');
  await deploymentWhere('rec', (x) => x.status?.availableReplicas === 2);
  // a finalizer keeps one old pod after its delete: the new ReplicaSet must wait for it
  const [held] = await podsOf('rec');
  const fin = await c.raw('PATCH', `${PODS}/${held.metadata.name}`, { body: JSON.stringify({ metadata: { finalizers: ['example.com/hold'] } }), headers: MERGE });
  assert.equal(fin.status, 200, fin.text);
  kubectl(['set', 'image', 'deployment/rec', 'c=nginx:2']);
  await until('the old ReplicaSet of rec at 0', async () => {
    const l = await rssOf('rec');
    return l.length >= 1 && l[0].spec.replicas === 0 ? true : undefined;
  });
  await until('the old pod of rec being deleted', async () => (await get(`${PODS}/${held.metadata.name}`)).metadata.deletionTimestamp);
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal((await rssOf('rec')).length, 1, 'no new ReplicaSet while an old pod exists');
  const rel = await c.raw('PATCH', `${PODS}/${held.metadata.name}`, { body: JSON.stringify({ metadata: { finalizers: null } }), headers: MERGE });
  assert.equal(rel.status, 200, rel.text);
  const [, cur] = await until('the new ReplicaSet of rec', async () => {
    const l = await rssOf('rec');
    return l.length === 2 && l[1].spec.replicas === 2 ? l : undefined;
  });
  assert.equal(cur.metadata.annotations['deployment.kubernetes.io/revision'], '2');
  assert.equal(cur.metadata.annotations['deployment.kubernetes.io/max-replicas'], '2');
  const k = kubelet('rec');
  const st = await c.kubectlAsync(['rollout', 'status', 'deployment/rec', '-n', NS, '--timeout=60s']);
  await k.stop();
  assert.equal(st.code, 0, st.stderr);
});

test('progressDeadlineSeconds: a rollout without progress is ProgressDeadlineExceeded and rollout status fails', async () => {
  await create(deployment('slow', 2, { progressDeadlineSeconds: 2 }));
  const d = await deploymentWhere('slow', (x) => cond(x, 'Progressing')?.reason === 'ProgressDeadlineExceeded', 20_000);
  const [rs] = await rssOf('slow');
  assert.equal(cond(d, 'Progressing').status, 'False');
  assert.equal(cond(d, 'Progressing').message, `ReplicaSet "${rs.metadata.name}" has timed out progressing.`);
  const st = c.kubectl(['rollout', 'status', 'deployment/slow', '-n', NS, '--timeout=20s']);
  assert.notEqual(st.code, 0);
  assert.match(st.stderr, /deployment "slow" exceeded its progress deadline/);
  // progress again once the pods are ready
  await readyAll('slow');
  const ok = await deploymentWhere('slow', (x) => cond(x, 'Progressing')?.reason === 'NewReplicaSetAvailable');
  assert.equal(cond(ok, 'Progressing').status, 'True');
});

test('revisionHistoryLimit: old ReplicaSets beyond the limit are deleted once scaled to 0', async () => {
  await create(deployment('hist', 1, { revisionHistoryLimit: 1 }));
  const k = kubelet('hist');
  try {
    for (const image of ['nginx:1', 'nginx:2', 'nginx:3']) {
      kubectl(['set', 'image', 'deployment/hist', `c=${image}`]);
      const st = await c.kubectlAsync(['rollout', 'status', 'deployment/hist', '-n', NS, '--timeout=60s']);
      assert.equal(st.code, 0, st.stderr);
    }
    const left = await until('hist down to 2 ReplicaSets', async () => {
      const l = await rssOf('hist');
      return l.length === 2 ? l : undefined;
    });
    assert.deepEqual(
      left.map((r) => [r.metadata.annotations['deployment.kubernetes.io/revision'], r.spec.replicas, r.spec.template.spec.containers[0].image]),
      [
        ['3', 0, 'nginx:2'],
        ['4', 1, 'nginx:3'],
      ],
    );
  } finally {
    await k.stop();
  }
});

test('an orphan ReplicaSet that matches is adopted (as the new one when its template is the same); one whose labels stop matching is released', async () => {
  const tmpl = { metadata: { labels: { app: 'adopt' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
  const made = await c.raw('POST', RSS, { body: { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'orphan', labels: { app: 'adopt' } }, spec: { replicas: 1, selector: { matchLabels: { app: 'adopt' } }, template: tmpl } } });
  assert.equal(made.status, 201, made.text);
  await create(deployment('adopt', 1));
  const d = await get(`${DEPLOYS}/adopt`);
  const rs = await until('orphan adopted', async () => {
    const r = await get(`${RSS}/orphan`);
    return r.metadata.ownerReferences?.[0]?.uid === d.metadata.uid && r.metadata.annotations?.['deployment.kubernetes.io/revision'] === '1' ? r : undefined;
  });
  assert.deepEqual(rs.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'adopt', uid: d.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await rssOf('adopt')).length, 1, 'the adopted ReplicaSet is the new one: no other is made');
  // its labels no longer match: released, and a new ReplicaSet is made
  const p = await c.raw('PATCH', `${RSS}/orphan`, { body: JSON.stringify({ metadata: { labels: { app: 'other' } } }), headers: MERGE });
  assert.equal(p.status, 200, p.text);
  await until('orphan released', async () => ((await get(`${RSS}/orphan`)).metadata.ownerReferences ?? []).length === 0);
  await until('a new ReplicaSet for adopt', async () => ((await rssOf('adopt')).length === 1 && (await rssOf('adopt'))[0].metadata.name.startsWith('adopt-') ? true : undefined));
});

test('kubectl 1.27: rollout undo --to-revision and rollout history --revision', async () => {
  const v = { version: '1.27' };
  const before = await rssOf('web');
  const two = before.find((r) => r.metadata.annotations['deployment.kubernetes.io/revision'] === '2');
  assert.ok(two, before.map((r) => r.metadata.annotations['deployment.kubernetes.io/revision']).join(','));
  const undo = c.kubectl(['rollout', 'undo', 'deployment/web', '--to-revision=2', '-n', NS], v);
  assert.equal(undo.code, 0, undo.stderr);
  const k = kubelet('web');
  try {
    const st = await c.kubectlAsync(['rollout', 'status', 'deployment/web', '-n', NS, '--timeout=60s'], v);
    assert.equal(st.code, 0, st.stderr);
  } finally {
    await k.stop();
  }
  const back = await get(`${RSS}/${two.metadata.name}`);
  assert.equal(back.metadata.annotations['deployment.kubernetes.io/revision'], '5');
  assert.equal(back.metadata.annotations['deployment.kubernetes.io/revision-history'], '2');
  const h = c.kubectl(['rollout', 'history', 'deployment/web', '--revision=5', '-n', NS], v);
  assert.equal(h.code, 0, h.stderr);
  assert.match(h.stdout, /revision #5/);
  assert.match(h.stdout, /Image:\s+nginx:1\.25/);
  assert.doesNotMatch(c.kubectl(['rollout', 'history', 'deployment/web', '-n', NS], v).stdout, /\n2\s+<none>\n/);
});
