// The request chain's limits as pure parts: which requests are long-running, the in-flight
// pools, the deadline of a request, a store's write stopped by a passed deadline once its
// validating admission is over, and the storage size limit over a real (memory) backend.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo } from '../../src/apiserver/requestinfo.js';
import {
  InFlightLimiter,
  requestScope,
  isLongRunning,
  isMutating,
  MAX_STORAGE_REQUEST_BYTES,
  nowMicros,
  RequestDeadline,
  oversizedWrite,
  requestTimeoutMs,
  StorageRequestTooLargeError,
  withStorageRequestLimit,
} from '../../src/apiserver/limits.js';
import { StatusError } from '../../src/machinery/errors.js';
import { MemoryBackend } from '../../src/storage/memory.js';
import { BUILTIN_KINDS } from '../../src/schema/kinds.js';
import { ResourceStore } from '../../src/apiserver/registry/store.js';
import { strategyFor } from '../../src/apiserver/registry/strategies.js';
import type { AdmissionAttributes } from '../../src/apiserver/admission/types.js';
import type { ServerResponse } from 'node:http';

const info = (method: string, url: string) => {
  const [path, q = ''] = url.split('?');
  return parseRequestInfo(method, path!, new URLSearchParams(q));
};

test('long-running requests: watches, proxy, and the attach, exec, log, portforward and proxy subresources', () => {
  for (const [m, u] of [
    ['GET', '/api/v1/namespaces/a/pods?watch=true'],
    ['GET', '/api/v1/watch/namespaces/a/pods'],
    ['GET', '/api/v1/namespaces/a/pods/p/log'],
    ['POST', '/api/v1/namespaces/a/pods/p/exec'],
    ['GET', '/api/v1/namespaces/a/pods/p/attach'],
    ['POST', '/api/v1/namespaces/a/pods/p/portforward'],
    ['GET', '/api/v1/namespaces/a/services/s/proxy/x'],
    ['GET', '/debug/pprof/profile'],
  ])
    assert.equal(isLongRunning(info(m!, u!)), true, `${m} ${u}`);
  for (const [m, u] of [
    ['GET', '/api/v1/namespaces/a/pods'],
    ['GET', '/api/v1/namespaces/a/pods/p/status'],
    ['POST', '/api/v1/namespaces/a/pods'],
    ['GET', '/healthz'],
  ])
    assert.equal(isLongRunning(info(m!, u!)), false, `${m} ${u}`);
  assert.equal(isMutating(info('GET', '/api/v1/pods')), false);
  assert.equal(isMutating(info('POST', '/api/v1/namespaces/a/pods')), true);
  assert.equal(isMutating(info('DELETE', '/api/v1/namespaces/a/pods/p')), true);
});

test('in-flight pools: full pools refuse, system:masters passes, long-running requests take nothing, 0 disables', () => {
  const l = new InFlightLimiter(1, 2);
  const get = { info: info('GET', '/api/v1/pods'), longRunning: false };
  const post = { info: info('POST', '/api/v1/namespaces/a/pods'), longRunning: false };
  const watch = { info: info('GET', '/api/v1/pods?watch=1'), longRunning: true };
  const alice = { name: 'alice', groups: ['system:authenticated'] };
  const admin = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };
  const r1 = l.acquire(get, alice)!;
  assert.ok(r1);
  assert.equal(l.acquire(get, alice), undefined);
  assert.ok(l.acquire(get, admin), 'system:masters is never refused');
  assert.ok(l.acquire(watch, alice));
  const w1 = l.acquire(post, alice)!;
  const w2 = l.acquire(post, alice)!;
  assert.equal(l.acquire(post, alice), undefined);
  assert.deepEqual(l.current, [1, 2]);
  r1();
  r1(); // a second release does nothing
  w1();
  assert.deepEqual(l.current, [0, 1]);
  assert.ok(l.acquire(get, alice));
  w2();
  const off = new InFlightLimiter(0, 0);
  assert.equal(off.enabled, false);
  for (let i = 0; i < 1000; i++) assert.ok(off.acquire(post, alice));
});

test('the deadline: --request-timeout, shortened (never lengthened) by the timeout parameter', () => {
  const q = (s: string) => new URLSearchParams(s);
  assert.equal(requestTimeoutMs(q(''), 60_000), 60_000);
  assert.equal(requestTimeoutMs(q('timeout=5s'), 60_000), 5000);
  assert.equal(requestTimeoutMs(q('timeout=1h'), 60_000), 60_000);
  assert.equal(requestTimeoutMs(q('timeout=0s'), 60_000), 60_000, '0 is the server default');
  assert.equal(requestTimeoutMs(q('timeout=-3s'), 60_000), 60_000);
  assert.equal(requestTimeoutMs(q('timeout=1500ms'), 60_000), 1500);
  assert.equal(requestTimeoutMs(q('timeout=1s'), 0), 1000, 'no --request-timeout: the parameter still applies');
  assert.throws(
    () => requestTimeoutMs(q('timeout=10'), 60_000),
    (e: unknown) => e instanceof StatusError && e.code === 400 && e.message === 'invalid timeout specified in the request URL - time: missing unit in duration "10"',
  );
});

test("a write whose deadline passed by the end of validating admission does not reach storage; both phases share the options", async () => {
  const backend = new MemoryBackend();
  await backend.open();
  const kind = BUILTIN_KINDS.find((k) => k.group === '' && k.resource === 'configmaps')!;
  const store = new ResourceStore(kind, strategyFor(kind), backend);
  await store.start();
  try {
    const seen: { phase: string; options: unknown }[] = [];
    const deadline = {
      timedOut: false,
      check() {
        if (this.timedOut) throw new StatusError(504, 'Timeout', 'late');
      },
    };
    const admission = (passDuring?: 'mutate' | 'validate') => ({
      chain: {
        plugins: ['X'],
        mutate: async (a: AdmissionAttributes) => {
          seen.push({ phase: 'mutate', options: a.options });
          if (passDuring === 'mutate') deadline.timedOut = true;
        },
        validate: async (a: AdmissionAttributes) => {
          seen.push({ phase: 'validate', options: a.options });
          if (passDuring === 'validate') deadline.timedOut = true;
        },
      },
      deadline,
      request: { namespace: 'default', name: '', options: { fieldManager: 'm' }, user: { name: 'u', groups: ['system:authenticated'] } },
    });
    const cm = (name: string): any => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { a: 'b' } });

    await store.create(cm('in-time'), { dryRun: false, admission: admission() });
    assert.ok(await backend.get('/registry/configmaps/default/in-time'), 'written');
    assert.deepEqual(seen.map((s) => s.phase), ['mutate', 'validate']);
    assert.equal(seen[0]!.options, seen[1]!.options, 'one options object for both phases');
    assert.deepEqual(seen[0]!.options, { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'm' });

    for (const when of ['mutate', 'validate'] as const) {
      deadline.timedOut = false;
      seen.length = 0;
      await assert.rejects(store.create(cm(`late-${when}`), { dryRun: false, admission: admission(when) }), (e: unknown) => e instanceof StatusError && e.code === 504);
      assert.deepEqual(seen.map((s) => s.phase), ['mutate', 'validate'], 'the validating phase still runs');
      assert.equal(await backend.get(`/registry/configmaps/default/late-${when}`), undefined, `a deadline passed during ${when}: nothing written`);
    }
    // without a deadline (the server's own writes) nothing is checked
    await store.create(cm('no-deadline'), { dryRun: false, admission: { ...admission(), deadline: undefined } });
    assert.ok(await backend.get('/registry/configmaps/default/no-deadline'));
  } finally {
    store.stop();
    await backend.close();
  }
});

test('request scopes: a repeated request line shares one frozen parse; each request has its own scope', () => {
  const req = (method: string, url: string) => ({ method, url }) as unknown as import('node:http').IncomingMessage;
  const a = requestScope(req('POST', '/api/v1/namespaces/default/configmaps?fieldManager=m'));
  const b = requestScope(req('POST', '/api/v1/namespaces/default/configmaps?fieldManager=m'));
  assert.notEqual(a, b, 'a scope per request (its deadline, its audit annotations)');
  assert.equal(a.info, b.info, 'one parse for the line');
  assert.ok(Object.isFrozen(a.info));
  assert.throws(() => {
    (a.info as { verb: string }).verb = 'get';
  }, TypeError);
  assert.deepEqual([a.path, a.query.get('fieldManager'), a.info.verb, a.info.namespace, a.info.resource], ['/api/v1/namespaces/default/configmaps', 'm', 'create', 'default', 'configmaps']);
  // the method is part of the line; so is the query (a watch is another verb)
  const g = requestScope(req('GET', '/api/v1/namespaces/default/configmaps'));
  const w = requestScope(req('GET', '/api/v1/namespaces/default/configmaps?watch=1'));
  assert.deepEqual([g.info.verb, g.longRunning, w.info.verb, w.longRunning], ['list', false, 'watch', true]);
  // a long line is parsed for its request alone
  const long = `/api/v1/namespaces/default/pods?labelSelector=${'a'.repeat(600)}`;
  const l1 = requestScope(req('GET', long));
  const l2 = requestScope(req('GET', long));
  assert.notEqual(l1.info, l2.info);
  assert.deepEqual(l1.info, l2.info);
});

test("storage size: etcd's limits, whatever the backend", async () => {
  const b = withStorageRequestLimit(new MemoryBackend());
  await b.open();
  const key = '/registry/configmaps/default/x';
  assert.equal(oversizedWrite(key, new Uint8Array(1000)), 0);
  assert.ok(oversizedWrite(key, new Uint8Array(MAX_STORAGE_REQUEST_BYTES)) > MAX_STORAGE_REQUEST_BYTES);
  const small = await b.create(key, new Uint8Array(10));
  await assert.rejects(b.update(key, new Uint8Array(1_600_000), small.modRevision), (e: unknown) => e instanceof StorageRequestTooLargeError && e.code === 500 && e.reason === '' && e.message === 'etcdserver: request is too large');
  await assert.rejects(b.create('/registry/configmaps/default/y', new Uint8Array(2_200_000)), (e: unknown) => e instanceof StorageRequestTooLargeError && /^rpc error: code = ResourceExhausted desc = trying to send message larger than max \(\d+ vs\. 2097152\)$/.test(e.message));
  assert.equal((await b.get(key))?.value.length, 10, 'the stored value is untouched');
  assert.equal(await b.currentRevision(), small.modRevision, 'other methods reach the backend');
  await b.close();
});

test('request deadlines: each fires once, in order of due time, whatever order they were set in; a cancelled one never fires', async () => {
  const fired: string[] = [];
  // a response that has begun: the deadline resets it (destroy)
  const res = (name: string) => ({ writableEnded: false, destroyed: false, headersSent: true, destroy: () => void fired.push(name) }) as unknown as ServerResponse;
  const t0 = nowMicros();
  const a = new RequestDeadline(res('a'), 60, t0, () => {});
  const b = new RequestDeadline(res('b'), 60, t0 - 40, () => {}); // set later, due earlier
  const c = new RequestDeadline(res('c'), 60, t0 + 10, () => {});
  const d = new RequestDeadline(res('d'), 30, t0, () => {}); // another timeout length
  const e = new RequestDeadline(res('e'), 60, t0 + 5, () => {});
  e.cancel();
  e.cancel(); // (twice is harmless)
  await new Promise((r) => setTimeout(r, 150));
  assert.deepEqual(fired, ['b', 'd', 'a', 'c']);
  assert.ok(a.timedOut && b.timedOut && c.timedOut && d.timedOut && !e.timedOut);
  a.cancel(); // (after it fired: nothing)
  // a deadline set after the others had gone still fires
  const f = new RequestDeadline(res('f'), 20, nowMicros(), () => {});
  await new Promise((r) => setTimeout(r, 80));
  assert.deepEqual(fired, ['b', 'd', 'a', 'c', 'f']);
  assert.ok(f.timedOut);
});
