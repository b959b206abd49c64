// The DaemonSet controller against a real `keelson server` (its scheduler binds the daemon pods):
// Nodes made by hand, Ready through nodes/status, the not-ready taint taken off as the node
// lifecycle controller would (which is left out here: without node agents it would find the
// nodes unreachable after 50 seconds). There is no kubelet: the test moves pods through their
// phases and readiness by writing pods/status, and the pods have terminationGracePeriodSeconds 0
// so that a delete removes them at once.
// Cases: one pod per untainted node, bound to its node, with the node affinity term, labels,
// tolerations, ControllerRevision and events; status and `kubectl get ds`; a nodeSelector, and a
// node labelled out losing its pod; a toleration for the tainted node; a new Node getting a pod; a
// rolling update by `kubectl set image` (kubectl 1.27) node by node within maxUnavailable 1;
// `kubectl rollout history` and `rollout status`; a Failed pod replaced; an orphan adopted and a
// second pod on a node deleted; OnDelete; maxSurge; revisionHistoryLimit; the DaemonSet's deletion.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { startCluster, until, freePort, KEELSON, ROOT, type Cluster, readyNode } from './harness.js';

let c: Cluster;
const K = '1.32';
const NS = 'daemons';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const DSS = `/apis/apps/v1/namespaces/${NS}/daemonsets`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
/** the Nodes' capacity and allocatable */
const RESOURCES = { cpu: '4', memory: '8Gi', pods: '110' };

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory', '--controllers=*,-node-lifecycle-controller'] });
  assert.equal((await c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
  await readyNode(c, 'ds-a', { resources: RESOURCES });
  await readyNode(c, 'ds-b', { labels: { tier: 'edge' }, resources: RESOURCES });
  await readyNode(c, 'ds-t', { taints: [{ key: 'dedicated', value: 'special', effect: 'NoSchedule' }], resources: RESOURCES });
});

after(async () => {
  await c?.stop();
});

function daemonSet(name: string, o: { nodeSelector?: Record<string, string>; tolerations?: any[]; strategy?: any; image?: string } = {}): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: NS },
    spec: {
      selector: { matchLabels: { app: name } },
      ...(o.strategy ? { updateStrategy: o.strategy } : {}),
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 0,
          ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}),
          ...(o.tolerations ? { tolerations: o.tolerations } : {}),
          containers: [{ name: 'c', image: o.image ?? 'busybox:1.36' }],
        },
      },
    },
  });
}

function create(body: string): void {
  const r = c.kubectl(['create', '-f', '-'], { version: K, input: body });
  assert.equal(r.code, 0, r.stderr);
}

/** the DaemonSet's pods not being deleted */
async function podsOf(name: string): Promise<any[]> {
  const r = await c.raw('GET', `${PODS}?labelSelector=app%3D${name}`);
  assert.equal(r.status, 200, r.text);
  return r.json().items.filter((p: any) => !p.metadata.deletionTimestamp);
}

const nodesOf = (pods: any[]) => pods.map((p) => p.spec.nodeName).sort();

/** the pods once there is one bound to each of `nodes` and no other */
async function untilOnNodes(name: string, nodes: string[], pred: (p: any) => boolean = () => true): Promise<any[]> {
  return until(`${name} on ${nodes.join(',')}`, async () => {
    const pods = await podsOf(name);
    if (pods.length !== nodes.length || !pods.every((p) => p.spec.nodeName && pred(p))) return undefined;
    return JSON.stringify(nodesOf(pods)) === JSON.stringify([...nodes].sort()) ? pods : undefined;
  }, 30_000);
}

async function setStatus(pod: any, phase: string, ready: boolean): Promise<void> {
  const t = now();
  const status: any = { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: t }] };
  const r = await c.raw('PATCH', `${PODS}/${pod.metadata.name}/status`, { body: JSON.stringify({ status }), headers: MERGE });
  assert.ok(r.status === 200 || r.status === 404, r.text);
}

const isReady = (p: any): boolean => !!p.status?.conditions?.some((x: any) => x.type === 'Ready' && x.status === 'True');

/**
 * Plays the node agent through a rollout until the DaemonSet has one ready pod of `image` on each
 * of `nodes`: each new pod is made ready once bound. Returns, of what each poll saw, the most nodes
 * without a ready pod, the most nodes with two pods, and the nodes whose new pod it made ready.
 */
async function untilRolled(name: string, image: string, nodes: string[]): Promise<{ maxDown: number; maxDoubled: number; replaced: Set<string> }> {
  let maxDown = 0;
  let maxDoubled = 0;
  const replaced = new Set<string>();
  await until(`${name} rolled to ${image}`, async () => {
    const pods = await podsOf(name);
    let down = 0;
    let doubled = 0;
    for (const n of nodes) {
      const here = pods.filter((p) => (p.spec.nodeName ?? p.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.[0]?.matchFields?.[0]?.values?.[0]) === n);
      if (!here.some(isReady)) down++;
      if (here.length > 1) doubled++;
    }
    maxDown = Math.max(maxDown, down);
    maxDoubled = Math.max(maxDoubled, doubled);
    let done = pods.length === nodes.length;
    for (const p of pods) {
      if (p.spec.containers[0].image !== image) done = false;
      else if (!isReady(p)) {
        done = false;
        if (p.spec.nodeName) {
          replaced.add(p.spec.nodeName);
          await setStatus(p, 'Running', true);
        }
      }
    }
    return done || undefined;
  }, 60_000);
  return { maxDown, maxDoubled, replaced };
}

async function getDS(name: string): Promise<any> {
  const r = await c.raw('GET', `${DSS}/${name}`);
  assert.equal(r.status, 200, r.text);
  return r.json();
}

function events(name: string): any[] {
  const r = c.kubectl(['get', 'events', '-n', NS, '--field-selector', `involvedObject.name=${name}`, '-o', 'json'], { version: K });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).items;
}

async function revisionsOf(name: string): Promise<any[]> {
  const r = await c.raw('GET', `/apis/apps/v1/namespaces/${NS}/controllerrevisions?labelSelector=app%3D${name}`);
  assert.equal(r.status, 200, r.text);
  return r.json().items;
}

test('one pod per untainted node, bound there by the scheduler, with the node affinity term, labels, tolerations, a ControllerRevision and events', async () => {
  create(daemonSet('agent'));
  const pods = await untilOnNodes('agent', ['ds-a', 'ds-b']);
  const ds = await getDS('agent');
  const revs = await until('a revision', async () => ((await revisionsOf('agent')).length === 1 ? revisionsOf('agent') : undefined));
  const rev = revs[0];
  const hash = rev.metadata.labels['controller-revision-hash'];
  assert.ok(hash);
  assert.equal(rev.metadata.name, `agent-${hash}`);
  assert.equal(rev.revision, 1);
  assert.deepEqual(rev.metadata.ownerReferences.map((r: any) => [r.kind, r.name, r.uid, r.controller]), [['DaemonSet', 'agent', ds.metadata.uid, true]]);
  assert.equal(rev.data.spec.template.$patch, 'replace');
  assert.deepEqual(rev.data.spec.template.spec.containers.map((x: any) => x.image), ['busybox:1.36']);
  for (const p of pods) {
    assert.equal(p.metadata.ownerReferences[0].kind, 'DaemonSet');
    assert.equal(p.metadata.ownerReferences[0].uid, ds.metadata.uid);
    assert.equal(p.metadata.labels['controller-revision-hash'], hash);
    assert.equal(p.metadata.labels['pod-template-generation'], '1');
    assert.match(p.metadata.name, /^agent-[a-z0-9]{5}$/);
    assert.deepEqual(p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms, [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [p.spec.nodeName] }] }]);
    const tol = p.spec.tolerations.map((t: any) => `${t.key}:${t.effect}`);
    for (const t of ['node.kubernetes.io/not-ready:NoExecute', 'node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/disk-pressure:NoSchedule', 'node.kubernetes.io/memory-pressure:NoSchedule', 'node.kubernetes.io/pid-pressure:NoSchedule', 'node.kubernetes.io/unschedulable:NoSchedule']) {
      assert.ok(tol.includes(t), `${t} in ${tol}`);
    }
    assert.ok(!tol.includes('node.kubernetes.io/network-unavailable:NoSchedule'), 'not a hostNetwork pod');
  }
  const ev = await until('the SuccessfulCreate events', () => {
    const e = events('agent').filter((x) => x.reason === 'SuccessfulCreate');
    return e.length === 2 ? e : undefined;
  });
  assert.deepEqual(ev.map((e) => e.message).sort(), pods.map((p) => `Created pod: ${p.metadata.name}`).sort());
  assert.equal(ev[0].source.component, 'daemonset-controller');
});

test('status fields and kubectl get ds follow readiness', async () => {
  let ds = await until('status of 2 scheduled', async () => {
    const d = await getDS('agent');
    return d.status?.currentNumberScheduled === 2 && d.status?.observedGeneration === d.metadata.generation ? d : undefined;
  });
  assert.deepEqual(
    { ...ds.status, conditions: undefined, collisionCount: undefined },
    { currentNumberScheduled: 2, numberMisscheduled: 0, desiredNumberScheduled: 2, numberReady: 0, observedGeneration: ds.metadata.generation, updatedNumberScheduled: 2, numberUnavailable: 2, conditions: undefined, collisionCount: undefined },
  );
  for (const p of await podsOf('agent')) await setStatus(p, 'Running', true);
  ds = await until('2 available', async () => {
    const d = await getDS('agent');
    return d.status?.numberAvailable === 2 ? d : undefined;
  });
  assert.equal(ds.status.numberReady, 2);
  assert.equal(ds.status.numberUnavailable ?? 0, 0);
  const r = c.kubectl(['get', 'ds', 'agent', '-n', NS], { version: K });
  assert.equal(r.code, 0, r.stderr);
  const [head, row] = r.stdout.trim().split('\n');
  assert.match(head!, /^NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE$/);
  assert.match(row!, /^agent\s+2\s+2\s+2\s+2\s+2\s+<none>\s+\S+$/);
  const s = c.kubectl(['rollout', 'status', 'ds/agent', '-n', NS, '--timeout=20s'], { version: K });
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stdout, /daemon set "agent" successfully rolled out/);
  const d = c.kubectl(['describe', 'ds', 'agent', '-n', NS], { version: K });
  assert.equal(d.code, 0, d.stderr);
  assert.match(d.stdout, /Desired Number of Nodes Scheduled: 2\n/);
  assert.match(d.stdout, /Number of Nodes Scheduled with Available Pods: 2\n/);
  assert.match(d.stdout, /Number of Nodes Misscheduled: 0\n/);
  assert.match(d.stdout, /Pods Status:\s+2 Running \/ 0 Waiting \/ 0 Succeeded \/ 0 Failed/);
  assert.match(d.stdout, /Normal\s+SuccessfulCreate\s+\S+\s+daemonset-controller\s+Created pod: agent-/);
});

test('a nodeSelector limits the nodes; a node labelled out loses its pod, labelled back gets one', async () => {
  create(daemonSet('edge', { nodeSelector: { tier: 'edge' } }));
  const [pod] = await untilOnNodes('edge', ['ds-b']);
  assert.equal(pod.spec.nodeSelector.tier, 'edge');
  const l = c.kubectl(['label', 'node', 'ds-b', 'tier-'], { version: K });
  assert.equal(l.code, 0, l.stderr);
  await until('the edge pod deleted', async () => ((await podsOf('edge')).length === 0 ? true : undefined));
  const ev = await until('SuccessfulDelete', () => events('edge').find((e) => e.reason === 'SuccessfulDelete'));
  assert.equal(ev.message, `Deleted pod: ${pod.metadata.name}`);
  const d = await until('desired 0', async () => {
    const x = await getDS('edge');
    return x.status?.desiredNumberScheduled === 0 && x.status?.currentNumberScheduled === 0 ? x : undefined;
  });
  assert.equal(d.status.numberMisscheduled, 0);
  assert.equal(c.kubectl(['label', 'node', 'ds-b', 'tier=edge'], { version: K }).code, 0);
  await untilOnNodes('edge', ['ds-b']);
  assert.equal(c.kubectl(['delete', 'ds', 'edge', '-n', NS], { version: K }).code, 0);
});

test('a toleration lets the pod onto the tainted node', async () => {
  create(daemonSet('everywhere', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'special', effect: 'NoSchedule' }] }));
  await untilOnNodes('everywhere', ['ds-a', 'ds-b', 'ds-t']);
  // (tainting a node NoSchedule keeps the pod that tolerates... and a NoExecute taint it does not tolerate takes it off)
  const t = c.kubectl(['taint', 'node', 'ds-t', 'evict=now:NoExecute'], { version: K });
  assert.equal(t.code, 0, t.stderr);
  await untilOnNodes('everywhere', ['ds-a', 'ds-b']);
  assert.equal(c.kubectl(['taint', 'node', 'ds-t', 'evict=now:NoExecute-'], { version: K }).code, 0);
  await untilOnNodes('everywhere', ['ds-a', 'ds-b', 'ds-t']);
  assert.equal(c.kubectl(['delete', 'ds', 'everywhere', '-n', NS], { version: K }).code, 0);
});

test('a new Node gets a pod', async () => {
  await readyNode(c, 'ds-c', { resources: RESOURCES });
  const pods = await untilOnNodes('agent', ['ds-a', 'ds-b', 'ds-c']);
  for (const p of pods) if (p.spec.nodeName === 'ds-c') await setStatus(p, 'Running', true);
  await until('3 available', async () => ((await getDS('agent')).status?.numberAvailable === 3 ? true : undefined));
});

test('kubectl set image (1.27) rolls node by node within maxUnavailable 1; rollout history and status', async () => {
  const before = await getDS('agent');
  const r = c.kubectl(['set', 'image', 'ds/agent', 'c=busybox:1.37', '-n', NS], { version: '1.27' });
  assert.equal(r.code, 0, r.stderr);
  const nodes = ['ds-a', 'ds-b', 'ds-c'];
  const { maxDown, replaced } = await untilRolled('agent', 'busybox:1.37', nodes);
  assert.equal(maxDown <= 1, true, `at most one node without a ready pod at a time (saw ${maxDown})`);
  assert.deepEqual([...replaced].sort(), nodes);
  const ds = await until('status of the rollout', async () => {
    const d = await getDS('agent');
    return d.status?.updatedNumberScheduled === 3 && d.status?.numberAvailable === 3 && d.status?.observedGeneration === d.metadata.generation ? d : undefined;
  });
  assert.equal(ds.metadata.generation, before.metadata.generation + 1);
  const pods = await podsOf('agent');
  const revs = await until('2 revisions', async () => {
    const rs = await revisionsOf('agent');
    return rs.length === 2 ? rs : undefined;
  });
  const cur = revs.find((x) => x.revision === 2);
  assert.ok(cur, JSON.stringify(revs.map((x) => [x.metadata.name, x.revision])));
  for (const p of pods) {
    assert.equal(p.metadata.labels['controller-revision-hash'], cur.metadata.labels['controller-revision-hash']);
    assert.equal(p.metadata.labels['pod-template-generation'], '2');
  }
  const h = c.kubectl(['rollout', 'history', 'daemonset/agent', '-n', NS], { version: K });
  assert.equal(h.code, 0, h.stderr);
  assert.match(h.stdout, /REVISION\s+CHANGE-CAUSE/);
  assert.match(h.stdout, /^1\s+<none>$/m);
  assert.match(h.stdout, /^2\s+<none>$/m);
  const h2 = c.kubectl(['rollout', 'history', 'daemonset/agent', '-n', NS, '--revision=1'], { version: K });
  assert.equal(h2.code, 0, h2.stderr);
  assert.match(h2.stdout, /busybox:1\.36/);
  const s = c.kubectl(['rollout', 'status', 'ds/agent', '-n', NS, '--timeout=20s'], { version: K });
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stdout, /daemon set "agent" successfully rolled out/);
  const g = c.kubectl(['get', 'ds', 'agent', '-n', NS, '--no-headers'], { version: K });
  assert.match(g.stdout, /^agent\s+3\s+3\s+3\s+3\s+3\s+<none>/);
});

test('a Failed pod is deleted (FailedDaemonPod) and made again on its node', async () => {
  const pods = await podsOf('agent');
  const victim = pods.find((p) => p.spec.nodeName === 'ds-b');
  assert.ok(victim);
  await setStatus(victim, 'Failed', false);
  const ev = await until('FailedDaemonPod', () => events('agent').find((e) => e.reason === 'FailedDaemonPod'));
  assert.equal(ev.type, 'Warning');
  assert.equal(ev.message, `Found failed daemon pod ${NS}/${victim.metadata.name} on node ds-b, will try to kill it`);
  const again = await untilOnNodes('agent', ['ds-a', 'ds-b', 'ds-c'], (p) => p.metadata.uid !== victim.metadata.uid);
  assert.ok(again.some((p) => p.spec.nodeName === 'ds-b'));
  const gone = await c.raw('GET', `${PODS}/${victim.metadata.name}`);
  assert.equal(gone.status, 404);
});

test('an orphan pod matching the selector is adopted; a second pod on a node is deleted', async () => {
  const ds = await getDS('agent');
  const extra = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'agent-extra', labels: { app: 'agent' } },
    spec: { nodeName: 'ds-a', terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox:1.37' }] },
  };
  const r = c.kubectl(['create', '-n', NS, '-f', '-'], { version: K, input: JSON.stringify(extra) });
  assert.equal(r.code, 0, r.stderr);
  // (adopted, then deleted as the second pod of ds-a: the Running pod is kept)
  await until('agent-extra adopted and deleted', async () => {
    const g = await c.raw('GET', `${PODS}/agent-extra`);
    return g.status === 404 ? true : undefined;
  });
  const ev = await until('its SuccessfulDelete', () => events('agent').find((e) => e.reason === 'SuccessfulDelete' && e.message === 'Deleted pod: agent-extra'));
  assert.ok(ev);
  await untilOnNodes('agent', ['ds-a', 'ds-b', 'ds-c']);
  assert.equal((await getDS('agent')).metadata.uid, ds.metadata.uid);
});

test('OnDelete: a template change replaces a pod only when it is deleted', async () => {
  create(daemonSet('manual', { strategy: { type: 'OnDelete' } }));
  const first = await untilOnNodes('manual', ['ds-a', 'ds-b', 'ds-c']);
  const p = c.kubectl(['set', 'image', 'ds/manual', 'c=busybox:1.37', '-n', NS], { version: K });
  assert.equal(p.code, 0, p.stderr);
  await until('observed', async () => {
    const d = await getDS('manual');
    return d.status?.observedGeneration === d.metadata.generation && (d.status?.updatedNumberScheduled ?? 0) === 0 ? true : undefined;
  });
  await new Promise((r) => setTimeout(r, 1500));
  assert.deepEqual((await podsOf('manual')).map((x) => x.metadata.uid).sort(), first.map((x) => x.metadata.uid).sort());
  const victim = first.find((x) => x.spec.nodeName === 'ds-c')!;
  assert.equal(c.kubectl(['delete', 'pod', victim.metadata.name, '-n', NS], { version: K }).code, 0);
  const now = await untilOnNodes('manual', ['ds-a', 'ds-b', 'ds-c'], (x) => x.metadata.uid !== victim.metadata.uid);
  const fresh = now.find((x) => x.spec.nodeName === 'ds-c')!;
  assert.equal(fresh.spec.containers[0].image, 'busybox:1.37');
  assert.equal(now.filter((x) => x.spec.containers[0].image === 'busybox:1.36').length, 2);
  await until('updatedNumberScheduled 1', async () => ((await getDS('manual')).status?.updatedNumberScheduled === 1 ? true : undefined));
});

test('maxSurge 1, maxUnavailable 0: each node gets its new pod beside the old one, which goes once the new one is ready', async () => {
  create(daemonSet('surge', { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } }));
  for (const p of await untilOnNodes('surge', ['ds-a', 'ds-b', 'ds-c'])) await setStatus(p, 'Running', true);
  await until('3 available', async () => ((await getDS('surge')).status?.numberAvailable === 3 ? true : undefined));
  const r = c.kubectl(['set', 'image', 'ds/surge', 'c=busybox:1.37', '-n', NS], { version: K });
  assert.equal(r.code, 0, r.stderr);
  const { maxDown, maxDoubled } = await untilRolled('surge', 'busybox:1.37', ['ds-a', 'ds-b', 'ds-c']);
  assert.equal(maxDown, 0, 'every node kept a ready pod');
  assert.equal(maxDoubled, 1, 'one node at a time had two pods');
  const s = c.kubectl(['rollout', 'status', 'ds/surge', '-n', NS, '--timeout=20s'], { version: K });
  assert.equal(s.code, 0, s.stderr);
});

test('revisionHistoryLimit drops old revisions no pod uses; deleting the DaemonSet takes its pods and revisions (garbage collector)', async () => {
  assert.equal((await revisionsOf('agent')).length, 2);
  const p = c.kubectl(['patch', 'ds', 'agent', '-n', NS, '--type=merge', '-p', '{"spec":{"revisionHistoryLimit":0}}'], { version: K });
  assert.equal(p.code, 0, p.stderr);
  const left = await until('one revision left', async () => {
    const rs = await revisionsOf('agent');
    return rs.length === 1 ? rs : undefined;
  });
  assert.equal(left[0].revision, 2);
  const d = c.kubectl(['delete', 'ds', 'agent', '-n', NS], { version: K });
  assert.equal(d.code, 0, d.stderr);
  await until('the pods and revisions gone', async () => ((await podsOf('agent')).length === 0 && (await revisionsOf('agent')).length === 0 ? true : undefined));
});

test('kubectl rollout undo: the first revision becomes current again under the next number, and the pods roll back', async () => {
  const before = await until('2 revisions of surge', async () => {
    const rs = await revisionsOf('surge');
    return rs.length === 2 ? rs : undefined;
  });
  const first = before.find((x) => x.revision === 1);
  assert.ok(first);
  const u = c.kubectl(['rollout', 'undo', 'ds/surge', '-n', NS], { version: K });
  assert.equal(u.code, 0, u.stderr);
  assert.match(u.stdout, /daemonset.apps\/surge rolled back/);
  const revs = await until('revision 1 renumbered 3', async () => {
    const rs = await revisionsOf('surge');
    return rs.length === 2 && rs.some((x) => x.metadata.name === first.metadata.name && x.revision === 3) ? rs : undefined;
  });
  assert.deepEqual(revs.map((x) => x.revision).sort(), [2, 3]);
  await untilRolled('surge', 'busybox:1.36', ['ds-a', 'ds-b', 'ds-c']);
  for (const p of await podsOf('surge')) assert.equal(p.metadata.labels['controller-revision-hash'], first.metadata.labels['controller-revision-hash']);
  const h = c.kubectl(['rollout', 'history', 'ds/surge', '-n', NS], { version: '1.27' });
  assert.equal(h.code, 0, h.stderr);
  assert.match(h.stdout, /^2\s+<none>$/m);
  assert.match(h.stdout, /^3\s+<none>$/m);
});

test('a second revision with the current template is adopted and kept (the higher number); the pods take its hash and the other goes', async () => {
  const [cur] = (await revisionsOf('surge')).sort((a, b) => b.revision - a.revision);
  const dup = { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'surge-dup', labels: { app: 'surge' } }, data: cur.data, revision: 10 };
  const r = await c.raw('POST', `/apis/apps/v1/namespaces/${NS}/controllerrevisions`, { body: dup });
  assert.equal(r.status, 201, r.text);
  const revs = await until('surge-dup kept alone', async () => {
    const rs = await revisionsOf('surge');
    return rs.some((x) => x.metadata.name === 'surge-dup') && !rs.some((x) => x.metadata.name === cur.metadata.name) ? rs : undefined;
  });
  const kept = revs.find((x) => x.metadata.name === 'surge-dup');
  assert.equal(kept.metadata.labels['controller-revision-hash'], 'surge-dup');
  assert.equal(kept.metadata.ownerReferences[0].kind, 'DaemonSet');
  const pods = await until('the pods relabelled', async () => {
    const ps = await podsOf('surge');
    return ps.length === 3 && ps.every((p) => p.metadata.labels['controller-revision-hash'] === 'surge-dup') ? ps : undefined;
  });
  assert.equal(pods.length, 3);
  await until('still 3 up to date', async () => ((await getDS('surge')).status?.updatedNumberScheduled === 3 ? true : undefined));
});

test('keelson controller-manager --use-service-account-credentials runs it as kube-system/daemon-set-controller, which the bootstrap RBAC allows', async () => {
  const c2 = await startCluster({ args: ['--storage-backend=memory', '--controllers=*,-daemonset-controller,-node-lifecycle-controller'] });
  const port = await freePort();
  let logs = '';
  const cm = spawn(
    process.execPath,
    [KEELSON, 'controller-manager', '--kubeconfig', c2.kubeconfig, '--secure-port', String(port), '--bind-address', '127.0.0.1', '--authentication-kubeconfig', c2.kubeconfig, '--authorization-kubeconfig', c2.kubeconfig, '--leader-elect=false', '--use-service-account-credentials', '--controllers=daemonset-controller', '--concurrent-daemonset-syncs=1'],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  cm.stdout!.on('data', (d) => (logs += d));
  cm.stderr!.on('data', (d) => (logs += d));
  try {
    await readyNode(c2, 'sa-a', { resources: RESOURCES });
    assert.equal((await c2.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status, 201);
    const r = c2.kubectl(['create', '-f', '-'], { version: K, input: daemonSet('sa') });
    assert.equal(r.code, 0, r.stderr);
    const pod = await until('the pod of the DaemonSet', async () => {
      const items = (await c2.raw('GET', `${PODS}?labelSelector=app%3Dsa`)).json().items;
      return items.length === 1 && items[0].spec.nodeName === 'sa-a' ? items[0] : undefined;
    }, 30_000).catch((e) => assert.fail(`${e}\n${logs}`));
    assert.equal(pod.metadata.ownerReferences[0].kind, 'DaemonSet');
    assert.equal((await c2.raw('GET', '/api/v1/namespaces/kube-system/serviceaccounts/daemon-set-controller')).status, 200);
    const ds = await until('the status', async () => {
      const d = (await c2.raw('GET', `${DSS}/sa`)).json();
      return d.status?.currentNumberScheduled === 1 ? d : undefined;
    });
    assert.equal(ds.status.desiredNumberScheduled, 1);
    assert.equal((await c2.raw('GET', `/apis/apps/v1/namespaces/${NS}/controllerrevisions?labelSelector=app%3Dsa`)).json().items.length, 1);
  } finally {
    cm.kill('SIGTERM');
    if (cm.exitCode === null) await new Promise((res) => cm.once('exit', res));
    await c2.stop();
  }
});
