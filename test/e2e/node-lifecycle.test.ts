// The node lifecycle controller and the taint eviction controller end to end, on a `keelson
// server` with short periods: the test plays the kubelets (Node status heartbeats), stops some,
// and watches what Kubernetes does to such nodes and their pods: conditions Unknown, pods not
// ready, NoExecute taints at --node-eviction-rate, pods deleted by their tolerations (at once, after
// tolerationSeconds, never; cancelled when the taint goes), pods of an out-of-service node deleted
// for good by the pod garbage collector, and no eviction at all when every node is down (master
// disruption mode).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, until, type Cluster, readyNode, nodeReadyCondition } from './harness.js';

let c: Cluster;
const beating = new Set<string>();
let beat: NodeJS.Timeout | undefined;

async function heartbeat(name: string): Promise<void> {
  const r = await c.raw('PATCH', `/api/v1/nodes/${name}/status`, {
    body: JSON.stringify({ status: { conditions: [nodeReadyCondition()] } }),
    headers: { 'content-type': 'application/strategic-merge-patch+json' },
  });
  assert.equal(r.status, 200, r.text);
}

async function node(name: string): Promise<any> {
  return (await c.raw('GET', `/api/v1/nodes/${name}`)).json();
}

async function pod(name: string): Promise<any> {
  const r = await c.raw('GET', `/api/v1/namespaces/default/pods/${name}`);
  return r.status === 200 ? r.json() : undefined;
}

const noExecute = (n: any, key: string) => (n.spec?.taints ?? []).find((t: any) => t.effect === 'NoExecute' && t.key === key);
const UNREACHABLE = 'node.kubernetes.io/unreachable';

async function mkPod(name: string, nodeName: string, tolerations: any[] = []): Promise<void> {
  const r = await c.raw('POST', '/api/v1/namespaces/default/pods', { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName, tolerations, containers: [{ name: 'c', image: 'busybox' }] } } });
  assert.equal(r.status, 201, r.text);
}

function events(name: string): string {
  const r = c.kubectl(['get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}']);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

before(async () => {
  c = await startCluster({
    args: [
      '--storage-backend=memory', '--disable-scheduler',
      '--controllers=serviceaccount-controller,node-lifecycle-controller,taint-eviction-controller,pod-garbage-collector-controller',
      '--node-monitor-period=1s', '--node-monitor-grace-period=3s', '--node-startup-grace-period=3s',
      '--node-eviction-rate=0.5',
    ],
  });
  for (const name of ['n1', 'n2', 'n3']) {
    // (the not-ready taint is the node lifecycle controller's to take off: it is under test)
    await readyNode(c, name, { removeNotReadyTaint: false });
    beating.add(name);
  }
  beat = setInterval(() => {
    for (const n of beating) heartbeat(n).catch(() => {});
  }, 700);
});

after(async () => {
  clearInterval(beat);
  await c?.stop();
});

test('nodes that stop posting: Unknown, their pods not ready, unreachable:NoExecute at --node-eviction-rate, and their pods deleted by their tolerations', async () => {
  // on n2: a pod that tolerates the taint for 2 s, one that tolerates it for ever (and is Ready)
  await mkPod('tol2', 'n2', [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 }]);
  await mkPod('forever', 'n2', [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute' }]);
  const ready = await c.raw('PATCH', '/api/v1/namespaces/default/pods/forever/status', { body: JSON.stringify({ status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }), headers: { 'content-type': 'application/strategic-merge-patch+json' } });
  assert.equal(ready.status, 200, ready.text);
  // the admission's default tolerations are there (300 s of not-ready; unreachable was given)
  assert.deepEqual((await pod('tol2')).spec.tolerations.map((t: any) => `${t.key}:${t.tolerationSeconds}`), [`${UNREACHABLE}:2`, 'node.kubernetes.io/not-ready:300']);
  beating.delete('n2');
  beating.delete('n3');
  const [a, b] = await until('n2 and n3 unreachable:NoExecute', async () => {
    const ns = await Promise.all([node('n2'), node('n3')]);
    return ns.every((n) => noExecute(n, UNREACHABLE)) ? ns : undefined;
  }, 30_000);
  for (const n of [a, b]) {
    const cond = n.status.conditions.find((x: any) => x.type === 'Ready');
    assert.deepEqual([cond.status, cond.reason, cond.message], ['Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.']);
    assert.ok((n.spec.taints ?? []).some((t: any) => t.key === UNREACHABLE && t.effect === 'NoSchedule'));
  }
  // one node every 2 s (--node-eviction-rate=0.5): the second taint came at least a second after the first
  const gap = Math.abs(Date.parse(noExecute(a, UNREACHABLE).timeAdded) - Date.parse(noExecute(b, UNREACHABLE).timeAdded));
  assert.ok(gap >= 1000, `taints ${gap} ms apart`);
  // the healthy node has none
  assert.equal(noExecute(await node('n1'), UNREACHABLE), undefined);
  // the pods of a node that stopped being ready are not ready
  const f = await until('forever not ready', async () => {
    const p = await pod('forever');
    return p?.status.conditions.find((x: any) => x.type === 'Ready')?.status === 'False' ? p : undefined;
  });
  assert.equal(f.metadata.deletionTimestamp, undefined);
  assert.match(events('forever'), /^NodeNotReady: Node is not ready$/m);
  // tolerated for 2 s: then marked for deletion, with its DisruptionTarget condition (and left
  // Terminating, as no kubelet is there to end it)
  const t = await until('tol2 deleted', async () => {
    const p = await pod('tol2');
    return p?.metadata.deletionTimestamp ? p : undefined;
  }, 15_000);
  const dt = t.status.conditions.find((x: any) => x.type === 'DisruptionTarget');
  assert.deepEqual([dt.status, dt.reason, dt.message], ['True', 'DeletionByTaintManager', 'Taint manager: deleting due to NoExecute taint']);
  assert.match(events('tol2'), /^TaintManagerEviction: Marking for deletion Pod default\/tol2$/m);
  await new Promise((r) => setTimeout(r, 2500));
  assert.equal((await pod('forever')).metadata.deletionTimestamp, undefined, 'a toleration without tolerationSeconds is for ever');
  // non-graceful node shutdown: the administrator's out-of-service taint (NoExecute, which
  // `forever` does not tolerate) ends both pods, and the pod garbage collector deletes them for
  // good, as no kubelet is there to (its round is every 20 s)
  const r = c.kubectl(['taint', 'nodes', 'n2', 'node.kubernetes.io/out-of-service=nodeshutdown:NoExecute']);
  assert.equal(r.code, 0, r.stderr);
  await until('tol2 and forever gone', async () => ((await pod('tol2')) === undefined && (await pod('forever')) === undefined ? true : undefined), 45_000);
});

test('a NoExecute taint of your own: pods that do not tolerate it are deleted at once; a deletion still waiting is cancelled when the taint goes', async () => {
  await mkPod('plain', 'n1');
  await mkPod('tol30', 'n1', [{ key: 'example.com/maintenance', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }]);
  let r = c.kubectl(['taint', 'nodes', 'n1', 'example.com/maintenance=now:NoExecute']);
  assert.equal(r.code, 0, r.stderr);
  await until('plain deleted', async () => ((await pod('plain'))?.metadata.deletionTimestamp ? true : undefined), 10_000);
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal((await pod('tol30')).metadata.deletionTimestamp, undefined);
  r = c.kubectl(['taint', 'nodes', 'n1', 'example.com/maintenance-']);
  assert.equal(r.code, 0, r.stderr);
  await until('the deletion cancelled', async () => (/^TaintManagerEviction: Cancelling deletion of Pod default\/tol30$/m.test(events('tol30')) ? true : undefined), 10_000);
  assert.equal((await pod('tol30')).metadata.deletionTimestamp, undefined);
});

test('every node down: no NoExecute taint anywhere (master disruption mode) until a node is ready again', async () => {
  beating.delete('n1');
  await until('no node has unreachable:NoExecute', async () => {
    const ns = await Promise.all(['n1', 'n2', 'n3'].map(node));
    const n1Unknown = ns[0].status.conditions.find((x: any) => x.type === 'Ready')?.status === 'Unknown';
    return n1Unknown && ns.every((n) => !noExecute(n, UNREACHABLE)) ? true : undefined;
  }, 30_000);
  // stays so
  await new Promise((r) => setTimeout(r, 2500));
  for (const n of await Promise.all(['n1', 'n2', 'n3'].map(node))) assert.equal(noExecute(n, UNREACHABLE), undefined, n.metadata.name);
  // n1 back: the others are tainted again
  beating.add('n1');
  await heartbeat('n1');
  await until('n2 and n3 tainted again', async () => ((await Promise.all([node('n2'), node('n3')])).every((n) => noExecute(n, UNREACHABLE)) ? true : undefined), 30_000);
  assert.equal(noExecute(await node('n1'), UNREACHABLE), undefined);
});
