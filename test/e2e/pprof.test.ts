// Go's /debug/pprof endpoints over V8's profilers (client/profiling.ts), where Kubernetes serves
// them: a real `keelson server` (--profiling, default true: the index, the CPU profile and the
// heap profile in Go's pprof format, the errors as net/http/pprof words them, RBAC on the
// non-resource URLs, 404 with --profiling=false), a `keelson scheduler` daemon's secure port with
// its delegated authentication and authorization, the kubelet's main port (enableProfilingHandler,
// in this process, as pod-logs.test.ts serves it), and `keelson patch --profile`.
//
// Every profile is read back with a decoder of its own, built here from profile.proto's field
// numbers (google/pprof proto/profile.proto), not with Keelson's encoder's schema.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import https from 'node:https';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { freePort, startCluster, stopProcess, until, KEELSON, ROOT, type Cluster } from './harness.js';
import { inProcessKubeletOptions } from './kubeletharness.js';
import { serveKubelet, type KubeletServing } from '../../src/cli/kubeletserving.js';
import { kubeletHandlers, type NodeAgentView } from '../../src/nodeagent/server.js';
import { nopLogger } from '../../src/client/log.js';
import { decodeProfile } from '../../src/codec/pprof.js';

// ── an independent reader of profile.proto ───────────────────────────────────────────────────

const PROFILE_PROTO = `
syntax = "proto3";
package perftools.profiles;
message Profile {
  repeated ValueType sample_type = 1;
  repeated Sample sample = 2;
  repeated Mapping mapping = 3;
  repeated Location location = 4;
  repeated Function function = 5;
  repeated string string_table = 6;
  int64 drop_frames = 7;
  int64 keep_frames = 8;
  int64 time_nanos = 9;
  int64 duration_nanos = 10;
  ValueType period_type = 11;
  int64 period = 12;
  repeated int64 comment = 13;
  int64 default_sample_type = 14;
}
message ValueType { int64 type = 1; int64 unit = 2; }
message Sample { repeated uint64 location_id = 1; repeated int64 value = 2; repeated Label label = 3; }
message Label { int64 key = 1; int64 str = 2; int64 num = 3; int64 num_unit = 4; }
message Mapping {
  uint64 id = 1; uint64 memory_start = 2; uint64 memory_limit = 3; uint64 file_offset = 4;
  int64 filename = 5; int64 build_id = 6;
  bool has_functions = 7; bool has_filenames = 8; bool has_line_numbers = 9; bool has_inline_frames = 10;
}
message Location { uint64 id = 1; uint64 mapping_id = 2; uint64 address = 3; repeated Line line = 4; bool is_folded = 5; }
message Line { uint64 function_id = 1; int64 line = 2; }
message Function { uint64 id = 1; int64 name = 2; int64 system_name = 3; int64 filename = 4; int64 start_line = 5; }
`;
const ProfileType = protobuf.parse(PROFILE_PROTO, { keepCase: true }).root.lookupType('perftools.profiles.Profile');

interface Read {
  sampleTypes: string[];
  periodType: string;
  period: number;
  timeNanos: bigint;
  durationNanos: number;
  comments: string[];
  mappings: string[];
  samples: { values: number[]; frames: { name: string; file: string; line: number }[] }[];
}

/** a pprof file: gzip (as Go writes it), then profile.proto's message, every reference checked */
function readPprof(body: Buffer): Read {
  assert.deepEqual([body[0], body[1]], [0x1f, 0x8b], 'gzip-compressed');
  const m = ProfileType.toObject(ProfileType.decode(gunzipSync(body)), { longs: String, arrays: true, defaults: true }) as any;
  const st: string[] = m.string_table;
  assert.equal(st[0], '', 'string_table[0] is ""');
  const s = (i: string | number) => {
    const n = Number(i);
    assert.ok(n >= 0 && n < st.length, `string index ${n}`);
    return st[n]!;
  };
  const fns = new Map<string, any>(m.function.map((f: any) => [String(f.id), f]));
  const locs = new Map<string, any>(m.location.map((l: any) => [String(l.id), l]));
  const mappingIds = new Set(m.mapping.map((x: any) => String(x.id)));
  for (const l of m.location) assert.ok(l.mapping_id === '0' || mappingIds.has(String(l.mapping_id)), `location ${l.id}'s mapping`);
  const types = m.sample_type.map((v: any) => `${s(v.type)}/${s(v.unit)}`);
  return {
    sampleTypes: types,
    periodType: m.period_type ? `${s(m.period_type.type)}/${s(m.period_type.unit)}` : '',
    period: Number(m.period),
    timeNanos: BigInt(m.time_nanos),
    durationNanos: Number(m.duration_nanos),
    comments: m.comment.map(s),
    mappings: m.mapping.map((x: any) => s(x.filename)),
    samples: m.sample.map((x: any) => {
      assert.equal(x.value.length, types.length, 'one value per sample type');
      return {
        values: x.value.map(Number),
        frames: x.location_id.flatMap((id: string) => {
          const l = locs.get(String(id));
          assert.ok(l, `location ${id}`);
          return l.line.map((ln: any) => {
            const f = fns.get(String(ln.function_id));
            assert.ok(f, `function ${ln.function_id}`);
            return { name: s(f.name), file: s(f.filename), line: Number(ln.line) };
          });
        }),
      };
    }),
  };
}

/** a frame of Keelson's own code: a named function in a file under dist/ (the bundle or the compiled modules) */
function ownFrames(r: Read): string[] {
  const dist = join(ROOT, 'dist');
  return r.samples.flatMap((x) => x.frames.filter((f) => f.file.startsWith(dist) && f.name !== '(anonymous)').map((f) => `${f.name} ${f.file}:${f.line}`));
}

function assertRecent(r: Read): void {
  const now = BigInt(Date.now()) * 1_000_000n;
  assert.ok(r.timeNanos > now - 600n * 1_000_000_000n && r.timeNanos <= now, `time_nanos ${r.timeNanos} is now`);
}

// ── keelson server ───────────────────────────────────────────────────────────────────────────

let c: Cluster;
let scheduler: ChildProcess | undefined;
let schedLogs = '';
let dir: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keelson-pprof-'));
  c = await startCluster({ args: ['--storage-backend=memory'] });
});
after(async () => {
  await stopProcess(scheduler);
  await c?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('the reader reads Go\'s own profiles (kubectl --profile=heap and goroutine), as the codec\'s decoder does', () => {
  for (const [name, types] of [
    ['heap', ['alloc_objects/count', 'alloc_space/bytes', 'inuse_objects/count', 'inuse_space/bytes']],
    ['goroutine', ['goroutine/count']],
  ] as const) {
    const out = join(dir, `go-${name}.pprof`);
    const r = c.kubectl(['version', '--client', `--profile=${name}`, `--profile-output=${out}`]);
    assert.equal(r.code, 0, r.stderr);
    const go = readPprof(readFileSync(out));
    assert.deepEqual(go.sampleTypes, types);
    assert.ok(go.samples.some((s) => s.frames.some((f) => f.name.startsWith('runtime.') || f.name.startsWith('main.'))), 'Go function names');
    const ours = decodeProfile(readFileSync(out));
    assert.deepEqual(ours.sampleTypes.map((t) => `${t.type}/${t.unit}`), types);
    assert.deepEqual(ours.samples.map((s) => s.values), go.samples.map((s) => s.values));
    assert.deepEqual(ours.samples.map((s) => s.stack.map((f) => f.functionName)), go.samples.map((s) => s.frames.map((f) => f.name)));
  }
});

test('kubectl get --raw /debug/pprof/: the index page of what is served', async () => {
  const r = c.kubectl(['get', '--raw', '/debug/pprof/']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^<html>\n<head>\n<title>\/debug\/pprof\/<\/title>/);
  for (const name of ['allocs', 'block', 'heap', 'mutex', 'profile']) assert.ok(r.stdout.includes(`<a href='${name}?debug=1'>${name}</a>`), name);
  // (what is not served is not listed: no goroutines, no Go execution trace; kube-apiserver has no cmdline route)
  for (const name of ['goroutine', 'threadcreate', 'trace', 'cmdline']) assert.ok(!r.stdout.includes(`>${name}<`), name);
  const raw = await c.raw('GET', '/debug/pprof/');
  assert.equal(raw.status, 200);
  assert.equal(raw.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(raw.headers['x-content-type-options'], 'nosniff');
  // /debug/pprof without its slash: k8s.io/apiserver's redirect
  const bare = await c.raw('GET', '/debug/pprof');
  assert.equal(bare.status, 302);
  assert.equal(bare.headers.location, '/debug/pprof/');
});

test('/debug/pprof/profile?seconds=2: a CPU profile in Go\'s format, with Keelson\'s own functions in it', async () => {
  // load for the profile to see: lists and creates while it runs
  let busy = true;
  const load = (async () => {
    let i = 0;
    while (busy) {
      await Promise.all([
        c.raw('GET', '/api/v1/namespaces/default/configmaps'),
        c.raw('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `load-${i++}` }, data: { a: 'b'.repeat(1000) } } }),
        c.raw('GET', '/openapi/v2'),
      ]);
    }
  })();
  const started = Date.now();
  // (the profile's 200 and headers come when it starts, its body when it ends)
  const t = c.credentials;
  let running!: () => void;
  const isRunning = new Promise<void>((r) => (running = r));
  const profile = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: c.port, path: '/debug/pprof/profile?seconds=2', rejectUnauthorized: false, cert: t.cert, key: t.key, agent: false }, (res) => {
      running();
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
  await isRunning;
  // a second CPU profile while one runs: Go's 500
  const second = await c.raw('GET', '/debug/pprof/profile?seconds=1');
  assert.equal(second.status, 500);
  assert.equal(second.text, 'Could not enable CPU profiling: cpu profiling already in use\n');
  assert.equal(second.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal(second.headers['x-go-pprof'], '1');
  assert.equal(second.headers['content-disposition'], undefined);
  const r = await profile;
  busy = false;
  await load;
  assert.equal(r.status, 200, r.body.toString());
  assert.ok(Date.now() - started >= 2000, 'the profile lasted its seconds');
  assert.equal(r.headers['content-type'], 'application/octet-stream');
  assert.equal(r.headers['content-disposition'], 'attachment; filename="profile"');
  const p = readPprof(r.body);
  assert.deepEqual(p.sampleTypes, ['samples/count', 'cpu/nanoseconds']);
  assert.equal(p.periodType, 'cpu/nanoseconds');
  assert.equal(p.period, 1_000_000);
  assertRecent(p);
  assert.ok(p.durationNanos >= 1_900_000_000 && p.durationNanos < 20_000_000_000, `duration ${p.durationNanos}`);
  assert.ok(p.samples.length > 0, 'samples');
  for (const s of p.samples) {
    assert.ok(s.values[0]! > 0 && s.values[1] === s.values[0]! * p.period, `values ${s.values}`);
    assert.ok(!s.frames.some((f) => f.name === '(idle)' || f.name === '(root)'), 'no idle or root frames');
  }
  const own = ownFrames(p);
  assert.ok(own.length > 0, 'a frame of Keelson\'s code');
  assert.ok(p.mappings.length >= 1);
  // the profiler is let go after each profile: another one may run
  const again = await c.raw('GET', '/debug/pprof/profile?seconds=1');
  assert.equal(again.status, 200, again.text);
  readPprof(again.body);
  // a client that goes away ends its profile (Go's sleep ends with the request's context)
  await new Promise<void>((resolve) => {
    const req = https.request({ host: '127.0.0.1', port: c.port, path: '/debug/pprof/profile?seconds=60', rejectUnauthorized: false, cert: t.cert, key: t.key, agent: false });
    req.on('error', () => resolve());
    req.end();
    setTimeout(() => {
      req.destroy();
      resolve();
    }, 500);
  });
  const after = await until('the profiler let go', async () => {
    const r = await c.raw('GET', '/debug/pprof/profile?seconds=1');
    return r.status === 200 ? r : undefined;
  }, 10_000);
  readPprof(after.body);
});

test('/debug/pprof/heap: V8\'s sampling heap profile as Go\'s heap profile (inuse_space); the other names', async () => {
  const r = await c.raw('GET', '/debug/pprof/heap?gc=1');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers['content-type'], 'application/octet-stream');
  assert.equal(r.headers['content-disposition'], 'attachment; filename="heap"');
  const p = readPprof(r.body);
  assert.deepEqual(p.sampleTypes, ['inuse_space/bytes']);
  assert.equal(p.periodType, 'space/bytes');
  assert.equal(p.period, 512 * 1024);
  assertRecent(p);
  assert.ok(p.samples.length > 0, 'the server has live objects it sampled since its start');
  assert.ok(p.samples.every((s) => s.values[0]! > 0));
  assert.ok(ownFrames(p).length > 0, 'allocations by Keelson\'s code');
  // allocs: the same data
  const a = await c.raw('GET', '/debug/pprof/allocs');
  assert.equal(a.headers['content-disposition'], 'attachment; filename="allocs"');
  assert.deepEqual(readPprof(a.body).sampleTypes, ['inuse_space/bytes']);
  // ?debug=1: text
  const t = await c.raw('GET', '/debug/pprof/heap?debug=1');
  assert.equal(t.headers['content-type'], 'text/plain; charset=utf-8');
  assert.match(t.text, /^heap profile: \d+ samples \[inuse_space\/bytes\] @ period 524288 space\/bytes\n/);
  // ?seconds=N: a delta profile
  const d = await c.raw('GET', '/debug/pprof/heap?seconds=1');
  assert.equal(d.status, 200, d.text);
  assert.equal(d.headers['content-disposition'], 'attachment; filename="heap-delta"');
  const dp = readPprof(d.body);
  assert.ok(dp.durationNanos >= 900_000_000, `delta over ${dp.durationNanos}`);
  for (const [q, text] of [
    ['seconds=0', 'invalid value for "seconds" - must be a positive integer'],
    ['seconds=abc', 'invalid value for "seconds" - must be a positive integer'],
    ['seconds=1&debug=1', 'seconds and debug params are incompatible'],
  ]) {
    const e = await c.raw('GET', `/debug/pprof/heap?${q}`);
    assert.equal(e.status, 400, q);
    assert.equal(e.text, `${text}\n`);
    assert.equal(e.headers['x-go-pprof'], '1');
  }
  // block and mutex: valid, empty (Node.js has no contention profiler)
  for (const name of ['block', 'mutex']) {
    const b = await c.raw('GET', `/debug/pprof/${name}`);
    assert.equal(b.status, 200);
    const bp = readPprof(b.body);
    assert.deepEqual(bp.sampleTypes, ['contentions/count', 'delay/nanoseconds']);
    assert.equal(bp.samples.length, 0);
    assert.match(bp.comments.join('\n'), /Node\.js has no/);
  }
  // what the runtime does not have: Go's "Unknown profile" (cmdline: kube-apiserver's routes have none)
  for (const name of ['goroutine', 'threadcreate', 'trace', 'cmdline', 'nonsense']) {
    const u = await c.raw('GET', `/debug/pprof/${name}`);
    assert.equal(u.status, 404, name);
    assert.equal(u.text, 'Unknown profile\n');
    assert.equal(u.headers['content-type'], 'text/plain; charset=utf-8');
  }
  const sym = await c.raw('GET', '/debug/pprof/symbol');
  assert.equal(sym.status, 200);
  assert.equal(sym.text, 'num_symbols: 1\n');
});

test('/debug/pprof/* are non-resource URLs under RBAC: 403 without a grant, 200 with nonResourceURLs /debug/pprof/*', async () => {
  const ns = '/api/v1/namespaces/default/serviceaccounts';
  assert.equal((await c.raw('POST', ns, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'profiler' } } })).status, 201);
  const tok = await c.raw('POST', `${ns}/profiler/token`, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} } });
  assert.equal(tok.status, 201, tok.text);
  const headers = { authorization: `Bearer ${tok.json().status.token}` };
  const denied = await c.rawNoAuth('GET', '/debug/pprof/heap', { headers });
  assert.equal(denied.status, 403, denied.text);
  const st = denied.json();
  assert.equal(st.reason, 'Forbidden');
  assert.match(st.message, /^forbidden: User "system:serviceaccount:default:profiler" cannot get path "\/debug\/pprof\/heap"/);
  const k = await c.kubectlAsync(['get', '--raw', '/debug/pprof/'], { kubeconfig: c.tokenKubeconfig('profiler', tok.json().status.token) });
  assert.notEqual(k.code, 0);
  assert.match(k.stderr, /Forbidden/);
  assert.equal((await c.raw('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'pprof' }, rules: [{ nonResourceURLs: ['/debug/pprof/*'], verbs: ['get'] }] } })).status, 201);
  assert.equal((await c.raw('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'pprof' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'pprof' }, subjects: [{ kind: 'ServiceAccount', name: 'profiler', namespace: 'default' }] } })).status, 201);
  const allowed = await until('the grant in effect', async () => {
    const r = await c.rawNoAuth('GET', '/debug/pprof/heap', { headers });
    return r.status === 200 ? r : undefined;
  });
  assert.deepEqual(readPprof(allowed.body).sampleTypes, ['inuse_space/bytes']);
  // anonymous: 403 as for any path it has no grant on
  assert.equal((await c.rawNoAuth('GET', '/debug/pprof/')).status, 403);
});

test('/debug/flags/v: PUT sets the log verbosity at once (the request log of -v 3 starts), other methods 406, bad values 400; the index; RBAC on the non-resource URL', async () => {
  const put = (v: string, headers?: Record<string, string>) => (headers ? c.rawNoAuth('PUT', '/debug/flags/v', { headers, body: v }) : c.raw('PUT', '/debug/flags/v', { body: v }));
  // at -v 0 no request is logged
  const marker = '/api/v1/namespaces/default/configmaps/flags-marker';
  assert.equal((await c.raw('GET', marker)).status, 404);
  assert.doesNotMatch(c.logs, /flags-marker/);
  const ok = await put('3');
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.text, 'successfully set klog.logging.verbosity to 3\n');
  assert.equal(ok.headers['content-type'], 'text/plain');
  assert.equal((await c.raw('GET', `${marker}-2`)).status, 404);
  await until('the request logged at -v 3', () => /"HTTP" verb="GET" URI="\/api\/v1\/namespaces\/default\/configmaps\/flags-marker-2"/.test(c.logs));
  assert.equal((await put('0')).status, 200);
  assert.equal((await c.raw('GET', `${marker}-3`)).status, 404);
  await new Promise((r) => setTimeout(r, 300));
  assert.doesNotMatch(c.logs, /flags-marker-3/);
  // klog.Level's parser, in GlogSetter's words
  const bad = await put('three');
  assert.equal(bad.status, 400);
  assert.equal(bad.text, 'failed set klog.logging.verbosity three: strconv.ParseInt: parsing "three": invalid syntax\n');
  assert.equal((await put('99999999999')).status, 400);
  const get = await c.raw('GET', '/debug/flags/v');
  assert.equal(get.status, 406);
  assert.equal(get.text, 'unsupported http method\n');
  // the index, for /debug/flags and anything else under it
  for (const p of ['/debug/flags', '/debug/flags/', '/debug/flags/other']) {
    const idx = await c.raw('GET', p);
    assert.equal(idx.status, 200, p);
    assert.match(idx.headers['content-type'] as string, /^text\/html/);
    assert.match(idx.text, /<title>\/debug\/flags\/<\/title>[\s\S]*<tr>v<br>/);
  }
  const k = await c.kubectlAsync(['get', '--raw', '/debug/flags/']);
  assert.equal(k.code, 0, k.stderr);
  assert.match(k.stdout, /flags:<br>/);
  // a service account without a grant on the path: 403 (verb put on a non-resource URL)
  const ns = '/api/v1/namespaces/default/serviceaccounts';
  assert.equal((await c.raw('POST', ns, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'flagger' } } })).status, 201);
  const tok = await c.raw('POST', `${ns}/flagger/token`, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} } });
  const denied = await put('2', { authorization: `Bearer ${tok.json().status.token}` });
  assert.equal(denied.status, 403, denied.text);
  assert.match(denied.json().message, /^forbidden: User "system:serviceaccount:default:flagger" cannot put path "\/debug\/flags\/v"/);
});

test('--profiling=false: /debug/pprof is Go\'s plain 404, as kube-apiserver\'s NotFoundHandler answers it', async () => {
  const off = await startCluster({ args: ['--storage-backend=memory', '--profiling=false', '--controllers=-*', '--disable-scheduler'] });
  try {
    for (const p of ['/debug/pprof/', '/debug/pprof/heap', '/debug/pprof/profile?seconds=1', '/debug/pprof', '/debug/flags/', '/debug/flags/v']) {
      const r = await off.raw('GET', p);
      assert.equal(r.status, 404, p);
      assert.equal(r.text, '404 page not found\n');
    }
  } finally {
    await off.stop();
  }
});

// ── keelson scheduler's secure port ──────────────────────────────────────────────────────────

function componentGet(port: number, path: string, opts: { cert?: boolean; method?: string; body?: string } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  const creds = opts.cert ? { cert: c.credentials.cert, key: c.credentials.key } : {};
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path, method: opts.method ?? 'GET', rejectUnauthorized: false, agent: false, ...creds }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

function startScheduler(port: number, extra: string[]): ChildProcess {
  const args = [KEELSON, 'scheduler', '--kubeconfig', c.kubeconfig, '--secure-port', String(port), '--bind-address', '127.0.0.1', '--leader-elect=false', '--authentication-kubeconfig', c.kubeconfig, '--authorization-kubeconfig', c.kubeconfig, ...extra];
  schedLogs = '';
  const p = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  p.stdout!.on('data', (d) => (schedLogs += d));
  p.stderr!.on('data', (d) => (schedLogs += d));
  return p;
}

test('keelson scheduler: /debug/pprof on its secure port behind delegated authentication and authorization; --profiling=false: 404', async () => {
  const port = await freePort();
  scheduler = startScheduler(port, []);
  await until('the scheduler\'s secure port', async () => {
    try {
      return (await componentGet(port, '/healthz')).status === 200;
    } catch {
      return false;
    }
  });
  const anon = await componentGet(port, '/debug/pprof/');
  assert.equal(anon.status, 403, schedLogs);
  assert.match(JSON.parse(anon.body.toString()).message, /^forbidden: User "system:anonymous" cannot get path "\/debug\/pprof\/"/);
  const index = await componentGet(port, '/debug/pprof/', { cert: true });
  assert.equal(index.status, 200);
  assert.match(index.body.toString(), /<a href='heap\?debug=1'>heap<\/a>/);
  const heap = await componentGet(port, '/debug/pprof/heap', { cert: true });
  assert.equal(heap.status, 200);
  const hp = readPprof(heap.body);
  assert.deepEqual(hp.sampleTypes, ['inuse_space/bytes']);
  // (a scheduler with nothing to schedule may hold no sampled object yet: one per 512 KiB allocated)
  assert.equal(hp.period, 512 * 1024);
  const cpu = await componentGet(port, '/debug/pprof/profile?seconds=1', { cert: true });
  assert.equal(cpu.status, 200);
  assert.deepEqual(readPprof(cpu.body).sampleTypes, ['samples/count', 'cpu/nanoseconds']);
  // /debug/flags/v beside it: anonymous 403, the admin's certificate 200
  assert.equal((await componentGet(port, '/debug/flags/v', { method: 'PUT', body: '2' })).status, 403);
  const set = await componentGet(port, '/debug/flags/v', { cert: true, method: 'PUT', body: '2' });
  assert.equal(set.status, 200, set.body.toString());
  assert.equal(set.body.toString(), 'successfully set klog.logging.verbosity to 2\n');
  assert.match((await componentGet(port, '/debug/flags/', { cert: true })).body.toString(), /<tr>v<br>/);
  await stopProcess(scheduler);

  const off = await freePort();
  scheduler = startScheduler(off, ['--profiling=false']);
  await until('the scheduler\'s secure port', async () => {
    try {
      return (await componentGet(off, '/healthz')).status === 200;
    } catch {
      return false;
    }
  });
  const none = await componentGet(off, '/debug/pprof/', { cert: true });
  assert.equal(none.status, 404);
  assert.equal(none.body.toString(), '404 page not found\n');
  await stopProcess(scheduler);
});

// ── the kubelet's main port ──────────────────────────────────────────────────────────────────

const view: NodeAgentView = {
  nodeName: 'pprof-node',
  pods: () => [],
  runningPods: async () => [],
  configz: () => ({}),
  healthChecks: () => ({ ping: () => undefined }),
  containerLogPath: async () => ({ error: 'no logs', code: 404 }),
} as unknown as NodeAgentView;

function plainGet(port: number, path: string, method = 'GET'): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the kubelet (enableProfilingHandler): /debug/pprof/ on its main port, cmdline included; off: 405 "profiling endpoint is disabled."', async () => {
  const t = c.credentials;
  let kubelet: KubeletServing | undefined;
  try {
    kubelet = await serveKubelet(
      inProcessKubeletOptions(c, join(dir, 'kubelet-pki'), await freePort(), { enableProfilingHandler: true }),
      view,
      { server: c.url, ca: t.ca, cert: t.cert, key: t.key },
      nopLogger,
    );
    const port = kubelet.port;
    // (the admin's certificate: system:masters, allowed nodes/proxy by the server's RBAC)
    const get = (path: string) => componentGet(port, path, { cert: true });
    const cmd = await get('/debug/pprof/cmdline');
    assert.equal(cmd.status, 200);
    assert.equal(cmd.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(cmd.body.toString(), process.argv.slice(1).join('\0'));
    const index = await get('/debug/pprof/');
    assert.match(index.body.toString(), /<a href='cmdline\?debug=1'>cmdline<\/a>/);
    const heap = await get('/debug/pprof/heap');
    assert.equal(heap.status, 200);
    assert.deepEqual(readPprof(heap.body).sampleTypes, ['inuse_space/bytes']);
    // over the kubelet's write timeout (4 h): Go's 400
    const long = await get('/debug/pprof/profile?seconds=14400');
    assert.equal(long.status, 400);
    assert.equal(long.body.toString(), "profile duration exceeds server's WriteTimeout\n");
    // anonymous is off: 401
    assert.equal((await componentGet(port, '/debug/pprof/')).status, 401);
  } finally {
    await kubelet?.close();
  }
  // the handlers with the profiling handler off, and with the debugging handlers off
  for (const [o, text] of [
    [{ enableDebuggingHandlers: true }, 'profiling endpoint is disabled.\n'],
    [{ enableDebuggingHandlers: true, enableProfilingHandler: false }, 'profiling endpoint is disabled.\n'],
    [{ enableDebuggingHandlers: false, enableProfilingHandler: true }, 'Debug endpoints are disabled.\n'],
  ] as const) {
    const h = kubeletHandlers(view, o);
    const srv = http.createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      void h.main(req, res, u.pathname, u.searchParams).then((done) => {
        if (!done) res.writeHead(404).end();
      });
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    try {
      const r = await plainGet((srv.address() as any).port, '/debug/pprof/heap');
      assert.equal(r.status, 405, JSON.stringify(o));
      assert.equal(r.body.toString(), text);
    } finally {
      srv.close();
    }
  }
  // GET only, as the kubelet's go-restful route
  const h = kubeletHandlers(view, { enableDebuggingHandlers: true, enableProfilingHandler: true });
  const srv = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    void h.main(req, res, u.pathname, u.searchParams);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  try {
    const r = await plainGet((srv.address() as any).port, '/debug/pprof/symbol', 'POST');
    assert.equal(r.status, 405);
  } finally {
    srv.close();
  }
});

// ── go tool pprof, where Go is installed ─────────────────────────────────────────────────────

const hasGo = spawnSync('go', ['version'], { encoding: 'utf8' }).status === 0;

test('go tool pprof -top reads the CPU and heap profiles', { skip: hasGo ? false : 'no go toolchain on this machine' }, async () => {
  const env = { PATH: process.env.PATH ?? '', HOME: dir, GOCACHE: join(dir, 'gocache'), GOPATH: join(dir, 'gopath') };
  for (const [path, type] of [
    ['/debug/pprof/profile?seconds=1', 'cpu'],
    ['/debug/pprof/heap', 'inuse_space'],
  ] as const) {
    const r = await c.raw('GET', path);
    assert.equal(r.status, 200);
    const file = join(dir, `go-top-${type}.pprof`);
    writeFileSync(file, r.body);
    const top = spawnSync('go', ['tool', 'pprof', '-top', file], { env, encoding: 'utf8', timeout: 120_000 });
    assert.equal(top.status, 0, top.stderr);
    assert.match(top.stdout, new RegExp(`^Type: ${type}$`, 'm'));
    assert.match(top.stdout, /flat%/);
  }
});

// ── keelson patch --profile ──────────────────────────────────────────────────────────────────

function patch(args: string[]): { code: number; stderr: string } {
  const r = spawnSync(process.execPath, [KEELSON, 'patch', 'configmap', 'patched', '-n', 'default', '-p', '{"data":{"k":"v"}}', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: c.home, KUBECONFIG: c.kubeconfig },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stderr: r.stderr };
}

test('keelson patch --profile=cpu|heap|block --profile-output: pprof files; goroutine is an unknown profile', async () => {
  assert.equal((await c.raw('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'patched' } } })).status, 201);
  const cpuOut = join(dir, 'cpu.pprof');
  const cpu = patch(['--profile=cpu', `--profile-output=${cpuOut}`]);
  assert.equal(cpu.code, 0, cpu.stderr);
  const cp = readPprof(readFileSync(cpuOut));
  assert.deepEqual(cp.sampleTypes, ['samples/count', 'cpu/nanoseconds']);
  assert.ok(cp.samples.length > 0, 'the command did work');
  assert.ok(ownFrames(cp).length > 0, 'Keelson\'s code ran');
  const heapOut = join(dir, 'heap.pprof');
  const heap = patch(['--profile', 'heap', '--profile-output', heapOut]);
  assert.equal(heap.code, 0, heap.stderr);
  const hp = readPprof(readFileSync(heapOut));
  assert.deepEqual(hp.sampleTypes, ['inuse_space/bytes']);
  assert.equal(hp.periodType, 'space/bytes');
  const blockOut = join(dir, 'block.pprof');
  assert.equal(patch(['--profile=block', `--profile-output=${blockOut}`]).code, 0);
  assert.deepEqual(readPprof(readFileSync(blockOut)).sampleTypes, ['contentions/count', 'delay/nanoseconds']);
  const g = patch(['--profile=goroutine', `--profile-output=${join(dir, 'g.pprof')}`]);
  assert.equal(g.code, 1);
  assert.equal(g.stderr, "error: unknown profile 'goroutine'\n");
  assert.throws(() => statSync(join(dir, 'g.pprof')));
});
