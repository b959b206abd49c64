// `keelson server --container-runtime-endpoint`: the server's machine joins its own cluster as a
// node, its node agent in a process of its own (cli/agent.ts), as a k3s server runs its agent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { until, type Cluster } from './harness.js';
import type { Containerd } from '../nodeagent/containerd.js';
import { startServerNode, type ServerNode } from './servernode.js';

let sn: ServerNode;
let c: Cluster;
let ctd: Containerd;
const NODE = 'keelson-server-node';

before(async () => {
  sn = await startServerNode({ node: NODE, args: ['--storage-backend=memory'], prefix: 'keelson-agent-' });
  ({ c, ctd } = sn);
});

after(async () => {
  await sn?.stop();
});

test('the server\'s node joins, runs a pod, serves its logs, runs a Deployment through the scheduler, and its agent stops with the server', async () => {
  await until('the node Ready', () => {
    const r = c.kubectl(['get', 'node', NODE, '--no-headers']);
    return r.code === 0 && /\sReady\s/.test(r.stdout) ? r.stdout : undefined;
  }, 60_000).catch((e) => {
    throw new Error(`${e.message}\n${c.logs.slice(-4000)}`);
  });
  assert.ok(existsSync(join(c.dataDir, 'kubelet', 'pki', 'kubelet-client-current.pem')), 'the node\'s client certificate under <data-dir>/kubelet');
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'hello' }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: ctd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'echo hello from the server node; sleep 3600'] }] } };
  const r = c.kubectl(['apply', '-f', '-'], { input: JSON.stringify(pod) });
  assert.equal(r.code, 0, r.stderr);
  await until('Running', () => c.kubectl(['get', 'pod', 'hello', '-o', 'jsonpath={.status.phase}']).stdout === 'Running', 60_000);
  const logs = await until('logs', () => {
    const l = c.kubectl(['logs', 'hello']);
    return l.code === 0 && l.stdout ? l.stdout : undefined;
  });
  assert.equal(logs, 'hello from the server node\n');
  const del = c.kubectl(['delete', 'pod', 'hello', '--wait=true', '--timeout=60s']);
  assert.equal(del.code, 0, del.stderr);
  // the node's not-ready taint (put on at registration) is taken off by the node lifecycle
  // controller once it is Ready, and the embedded scheduler places a Deployment's pods on it
  await until('no NoSchedule taint', () => c.kubectl(['get', 'node', NODE, '-o', 'jsonpath={.spec.taints}']).stdout === '');
  const dep = c.kubectl(['create', 'deployment', 'web', `--image=${ctd.images.busybox}`, '--replicas=2', '--', 'sh', '-c', 'echo up; sleep 3600']);
  assert.equal(dep.code, 0, dep.stderr);
  const rollout = c.kubectl(['rollout', 'status', 'deployment/web', '--timeout=90s'], { timeoutMs: 100_000 });
  assert.equal(rollout.code, 0, `${rollout.stdout}\n${rollout.stderr}`);
  const pods = c.kubectl(['get', 'pods', '-l', 'app=web', '-o', 'jsonpath={range .items[*]}{.spec.nodeName} {.status.phase}{"\\n"}{end}']);
  assert.equal(pods.stdout, `${NODE} Running\n${NODE} Running\n`);
  const events = c.kubectl(['get', 'events', '--field-selector', 'reason=Scheduled', '-o', 'jsonpath={range .items[*]}{.message}{"\\n"}{end}']);
  assert.match(events.stdout, new RegExp(`Successfully assigned default/web-\\S+ to ${NODE}`));
  // the service proxy beside the agent: a Service of the Deployment gets its rules in the node's table
  const exp = c.kubectl(['expose', 'deployment', 'web', '--port=80', '--target-port=8080']);
  assert.equal(exp.code, 0, exp.stderr);
  const ip = c.kubectl(['get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}']).stdout;
  const podIPs = c.kubectl(['get', 'pods', '-l', 'app=web', '-o', 'jsonpath={.items[*].status.podIP}']).stdout.split(' ').filter(Boolean);
  assert.equal(podIPs.length, 2, 'the two pods\' IPs');
  // (the Service's cluster IP in the service-ips map, and a DNAT to each endpoint)
  await until('the Service in the proxy\'s table', () => {
    const t = spawnSync('nft', ['list', 'table', 'ip', sn.table], { encoding: 'utf8' }).stdout ?? '';
    return t.includes(`${ip} . tcp . 80`) && podIPs.every((p) => t.includes(`dnat to ${p}:8080`)) ? t : undefined;
  }, 30_000);
  assert.match(c.logs, /Started the service proxy/);
  c.kubectl(['delete', 'service', 'web']);
  c.kubectl(['delete', 'deployment', 'web']);
  c.kubectl(['delete', 'pods', '-l', 'app=web', '--wait=true', '--timeout=60s']);
  // SIGTERM: the agent stops first, then the server exits 0
  const code = await c.stopProcess();
  assert.equal(code, 0, c.logs.slice(-3000));
  assert.match(c.logs, /Started the node agent/);
});
