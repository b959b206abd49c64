// The namespace controller: condition bookkeeping (pure), controller selection, and the
// controller run by hand against a real `keelson apiserver` (which has no controllers of its
// own), with discovery replaced to exercise discovery failures and the list-and-delete path.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { freePort, KEELSON, ROOT } from '../e2e/harness.js';
import { RESTClient } from '../../src/client/rest.js';
import { DiscoveryClient, GroupDiscoveryFailedError, gvr, resource, type DiscoveryResult } from '../../src/client/resources.js';
import { Informer } from '../../src/client/informer.js';
import { NamespaceConditionUpdater, NamespaceController, type Namespace } from '../../src/controllers/namespace.js';
import { ControllerManager } from '../../src/controllers/manager.js';
import { defaultControllerManagerOptions, isControllerEnabled, validateControllerManagerOptions } from '../../src/controllers/options.js';

// ── pure parts ──────────────────────────────────────────────────────────────

test('conditions: all five are written, "ok" variants when nothing failed', () => {
  const u = new NamespaceConditionUpdater();
  u.processContentTotals({ gvrToNumRemaining: new Map(), finalizersToNumRemaining: new Map() });
  const ns: Namespace = { metadata: { name: 'x' }, status: { phase: 'Terminating' } };
  assert.equal(u.update(ns), true);
  assert.deepEqual(
    ns.status!.conditions!.map((c) => [c.type, c.status, c.reason, c.message]),
    [
      ['NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered', 'All resources successfully discovered'],
      ['NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions', 'All legacy kube types successfully parsed'],
      ['NamespaceDeletionContentFailure', 'False', 'ContentDeleted', 'All content successfully deleted, may be waiting on finalization'],
      ['NamespaceContentRemaining', 'False', 'ContentRemoved', 'All content successfully removed'],
      ['NamespaceFinalizersRemaining', 'False', 'ContentHasNoFinalizers', 'All content-preserving finalizers finished'],
    ],
  );
  // the same outcome again changes nothing
  const again = new NamespaceConditionUpdater();
  again.processContentTotals({ gvrToNumRemaining: new Map(), finalizersToNumRemaining: new Map() });
  assert.equal(again.update(ns), false);
});

test('conditions: failures, sorted messages, transition time only on status change', () => {
  const ns: Namespace = { metadata: { name: 'x' }, status: { conditions: [{ type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain', message: 'old', lastTransitionTime: '2000-01-01T00:00:00Z' }] } };
  const u = new NamespaceConditionUpdater();
  u.processDiscoverResourcesErr(new GroupDiscoveryFailedError(new Map([['metrics.k8s.io/v1beta1', new Error('the server is currently unable to handle the request')]])));
  u.processGroupVersionErr(new Error('unexpected GroupVersion string: a/b/c'));
  u.processDeleteContentErr(new Error('b failed'));
  u.processDeleteContentErr(new Error('a failed'));
  u.processContentTotals({
    gvrToNumRemaining: new Map([
      ['apps/v1/deployments', { gvr: gvr('apps/v1', 'deployments'), n: 2 }],
      ['/v1/configmaps', { gvr: gvr('v1', 'configmaps'), n: 1 }],
    ]),
    finalizersToNumRemaining: new Map([
      ['z.io/f', 1],
      ['a.io/f', 2],
    ]),
  });
  assert.equal(u.update(ns), true);
  const by = Object.fromEntries(ns.status!.conditions!.map((c) => [c.type, c]));
  assert.equal(
    by.NamespaceDeletionDiscoveryFailure!.message,
    'Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: the server is currently unable to handle the request',
  );
  assert.equal(by.NamespaceDeletionDiscoveryFailure!.reason, 'DiscoveryFailed');
  assert.equal(by.NamespaceDeletionGroupVersionParsingFailure!.reason, 'GroupVersionParsingFailed');
  assert.equal(by.NamespaceDeletionContentFailure!.message, 'Failed to delete all resource types, 2 remaining: a failed, b failed');
  assert.equal(by.NamespaceContentRemaining!.message, 'Some resources are remaining: configmaps. has 1 resource instances, deployments.apps has 2 resource instances');
  assert.equal(by.NamespaceContentRemaining!.lastTransitionTime, '2000-01-01T00:00:00Z', 'status unchanged: transition time kept');
  assert.equal(by.NamespaceFinalizersRemaining!.message, 'Some content in the namespace has finalizers remaining: a.io/f in 2 resource instances, z.io/f in 1 resource instances');
});

test('--controllers selection and option validation', () => {
  assert.equal(isControllerEnabled('namespace-controller', ['*']), true);
  assert.equal(isControllerEnabled('namespace-controller', ['*', '-namespace']), false);
  assert.equal(isControllerEnabled('namespace-controller', ['-namespace-controller', '*']), false);
  assert.equal(isControllerEnabled('namespace-controller', ['namespace']), true);
  assert.equal(isControllerEnabled('namespace-controller', []), false);
  assert.deepEqual(validateControllerManagerOptions(defaultControllerManagerOptions()), []);
  assert.deepEqual(validateControllerManagerOptions({ ...defaultControllerManagerOptions(), controllers: ['*', 'bogus'], renewDeadlineMs: 20_000 }), [
    '"bogus" is not in the list of known controllers',
    'leaseDuration must be greater than renewDeadline',
  ]);
  // kube-controller-manager's words: the lock first, names without their dash
  assert.deepEqual(validateControllerManagerOptions({ ...defaultControllerManagerOptions(), controllers: ['foo', '-bar'], resourceLock: 'endpoints' }), [
    'resourceLock value must be "leases"',
    '"foo" is not in the list of known controllers',
    '"bar" is not in the list of known controllers',
  ]);
  // kube-controller-manager's other controllers (and their old names) are accepted: kubeadm's default
  assert.deepEqual(validateControllerManagerOptions({ ...defaultControllerManagerOptions(), controllers: ['*', 'bootstrapsigner', 'tokencleaner', '-garbage-collector-controller'] }), []);
});

// ── against a real API server without controllers ───────────────────────────

let proc: ChildProcess;
let dataDir: string;
let rest: RESTClient;

before(async () => {
  const port = await freePort();
  dataDir = mkdtempSync(join(tmpdir(), 'keelson-nsctl-'));
  proc = spawn(process.execPath, [KEELSON, 'apiserver', '--data-dir', dataDir, '--secure-port', String(port), '--bind-address', '127.0.0.1', '--storage-backend', 'memory'], { cwd: ROOT, stdio: 'ignore' });
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const kc = YAML.parse(readFileSync(join(dataDir, 'kubeconfig'), 'utf8'));
      const cl = kc.clusters[0].cluster;
      const u = kc.users[0].user;
      rest = new RESTClient({
        server: `https://127.0.0.1:${port}`,
        ca: Buffer.from(cl['certificate-authority-data'], 'base64'),
        cert: Buffer.from(u['client-certificate-data'], 'base64'),
        key: Buffer.from(u['client-key-data'], 'base64'),
        qps: Infinity,
      });
      await rest.request({ method: 'GET', path: '/readyz' });
      break;
    } catch (e) {
      if (Date.now() > deadline || proc.exitCode !== null) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
});

after(async () => {
  rest?.close();
  if (proc && proc.exitCode === null) {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function until<T>(what: string, f: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('discovery failure: the namespace stays Terminating with NamespaceDeletionDiscoveryFailure until discovery works', async () => {
  const namespaces = resource<Namespace>(rest, gvr('v1', 'namespaces'));
  const cms = resource(rest, gvr('v1', 'configmaps'), 'partial');
  await namespaces.create({ metadata: { name: 'partial' } });
  await cms.create({ metadata: { name: 'one' } });
  await cms.create({ metadata: { name: 'two' } });

  const real = new DiscoveryClient(rest);
  let broken = true;
  let calls = 0; // successful discoveries
  const discover = async (): Promise<DiscoveryResult> => {
    const fail = broken;
    const r = await real.serverPreferredNamespacedResources();
    if (!fail) {
      calls++;
      return r;
    }
    // configmaps can only be deleted one by one here; one group "fails"
    const lists = r.lists.map((l) =>
      l.groupVersion === 'v1' ? { ...l, resources: l.resources.map((x) => (x.name === 'configmaps' ? { ...x, verbs: ['delete', 'get', 'list'] } : x)) } : l,
    );
    return { lists, error: new GroupDiscoveryFailedError(new Map([['metrics.k8s.io/v1beta1', new Error('the server is currently unable to handle the request')]])) };
  };

  const informer = new Informer<Namespace>(resource<Namespace>(rest, gvr('v1', 'namespaces')));
  const ctl = new NamespaceController({ client: rest, informer, discover, deletionGracePeriodMs: 0 });
  const stop = new AbortController();
  informer.run();
  const running = ctl.run(2, stop.signal);
  try {
    await namespaces.delete('partial');
    const ns = await until('the discovery failure condition', async () => {
      const o = await namespaces.get('partial');
      return o.status?.conditions?.some((c) => c.type === 'NamespaceDeletionDiscoveryFailure' && c.status === 'True') ? o : undefined;
    });
    assert.equal(ns.status!.phase, 'Terminating');
    assert.deepEqual(ns.spec!.finalizers, ['kubernetes']);
    const cond = ns.status!.conditions!.find((c) => c.type === 'NamespaceDeletionDiscoveryFailure')!;
    assert.equal(cond.reason, 'DiscoveryFailed');
    assert.match(cond.message!, /^Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: metrics.k8s.io\/v1beta1/);
    // the content was deleted item by item anyway
    assert.deepEqual((await cms.list()).items, []);

    // retried with backoff; once discovery works the namespace is finalized and removed
    broken = false;
    await until('the namespace gone', async () => {
      try {
        await namespaces.get('partial');
        return false;
      } catch (e) {
        return (e as { code?: number }).code === 404;
      }
    });
    assert.ok(calls > 0, 'finalized after a successful discovery');
  } finally {
    stop.abort();
    await running;
    await informer.stop();
  }
});

test('controller manager: one of two managers leads and runs the namespace controller; the other takes over when it stops', async () => {
  const t = rest.config;
  const mk = (id: string) =>
    new ControllerManager({
      rest: { server: t.server, ca: t.ca, cert: t.cert, key: t.key },
      userAgent: 'test-controller-manager/v0.0.0',
      identity: id,
      options: { resourceName: 'test-kcm', leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 250 },
    });
  const namespaces = resource<Namespace>(rest, gvr('v1', 'namespaces'));
  const a = mk('kcm-a');
  a.start();
  await until('a leads', async () => a.isLeader());
  const b = mk('kcm-b');
  b.start();
  try {
    await namespaces.create({ metadata: { name: 'by-a' } });
    await namespaces.delete('by-a');
    await until('by-a removed', async () => namespaces.get('by-a').then(() => false, (e) => e.code === 404));
    assert.equal(b.isLeader(), false);
    await a.stop(); // releases the Lease
    await until('b leads', async () => b.isLeader());
    const lease = await resource(rest, gvr('coordination.k8s.io/v1', 'leases'), 'kube-system').get('test-kcm');
    assert.equal(lease.spec.holderIdentity, 'kcm-b');
    await namespaces.create({ metadata: { name: 'by-b' } });
    await namespaces.delete('by-b');
    await until('by-b removed', async () => namespaces.get('by-b').then(() => false, (e) => e.code === 404));
  } finally {
    await a.stop();
    await b.stop();
  }
});
