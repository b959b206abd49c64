// Admission end to end: `keelson server` with its default admission chain, driven by kubectl and
// raw HTTPS as a user would, and a real HTTPS webhook server started by the test on 127.0.0.1.
// Every expectation is what a Kubernetes 1.33 API server answers with the same plugins enabled.
//
// The server has no service account controller yet, so the tests create each namespace's
// `default` ServiceAccount themselves before creating pods (a cluster does it just after the
// namespace appears).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, KEELSON, ROOT, startCluster, type Cluster, type RunResult } from './harness.js';
import { patchResponse, respond, startWebhookServer, type WebhookServer } from '../admission/webhookserver.js';

let c: Cluster;
let hooks: WebhookServer;

before(async () => {
  c = await startCluster();
  hooks = await startWebhookServer();
  hooks.handle('/label', (r) => patchResponse(r, [{ op: 'add', path: '/metadata/labels/admitted-by', value: 'webhook' }]));
  hooks.handle('/deny', (r) =>
    r.request.object?.metadata?.labels?.deny === 'true' ? respond(r, { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'labelled deny' } }) : respond(r, { allowed: true, warnings: ['checked by the test webhook'] }),
  );
  hooks.handle('/slow', async (r) => {
    await new Promise((x) => setTimeout(x, 2500));
    return respond(r, { allowed: true });
  });
});

after(async () => {
  await hooks?.close();
  await c?.stop();
});

async function json(method: string, path: string, body?: object): Promise<{ status: number; body: any; warnings: string[] }> {
  const r = await c.raw(method, path, body ? { body } : {});
  const w = r.headers.warning;
  const warnings = (Array.isArray(w) ? w : w ? [w] : []).flatMap((x) => x.split(/,\s*(?=299 )/)).map((x) => x.replace(/^299 - "/, '').replace(/"$/, ''));
  return { status: r.status, body: r.text ? r.json() : undefined, warnings };
}

async function namespace(name: string, labels: Record<string, string> = {}): Promise<void> {
  const r = await json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
  assert.ok(r.status === 201 || r.status === 409, JSON.stringify(r.body));
  const sa = await json('POST', `/api/v1/namespaces/${name}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  assert.ok(sa.status === 201 || sa.status === 409, JSON.stringify(sa.body));
}

const podBody = (name: string, spec: any = {}, meta: any = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...meta },
  spec: { schedulerName: 'manual', containers: [{ name: 'app', image: 'nginx' }], ...spec },
});

function kubectl(args: string[], input?: string) {
  return c.kubectl(args, { input });
}

/** kubectl without blocking this process: needed while the test's own webhook server must answer */
function kubectlAsync(args: string[]): Promise<RunResult> {
  return c.kubectlAsync(args);
}

test('NamespaceLifecycle: the immortal namespaces; content of missing namespaces', async () => {
  let r = kubectl(['delete', 'namespace', 'default']);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, 'Error from server (Forbidden): namespaces "default" is forbidden: this namespace may not be deleted\n');
  r = kubectl(['delete', 'namespace', 'kube-system', '--dry-run=server']);
  assert.equal(r.stderr, 'Error from server (Forbidden): namespaces "kube-system" is forbidden: this namespace may not be deleted\n');
  r = kubectl(['create', 'configmap', 'x', '-n', 'no-such-namespace']);
  assert.equal(r.stderr, 'error: failed to create configmap: namespaces "no-such-namespace" not found\n');
});

test('ServiceAccount, Priority and DefaultTolerationSeconds shape a new pod', async () => {
  await namespace('adm-pods');
  const r = await json('POST', '/api/v1/namespaces/adm-pods/pods', podBody('web', { priorityClassName: 'system-cluster-critical' }));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const spec = r.body.spec;
  assert.equal(spec.serviceAccountName, 'default');
  assert.equal(spec.serviceAccount, 'default');
  assert.match(spec.volumes[0].name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  assert.deepEqual(spec.containers[0].volumeMounts, [{ name: spec.volumes[0].name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
  assert.equal(spec.priority, 2000000000);
  assert.equal(spec.preemptionPolicy, 'PreemptLowerPriority');
  assert.deepEqual(spec.tolerations, [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  ]);
  const missing = await json('POST', '/api/v1/namespaces/adm-pods/pods', podBody('robot', { serviceAccountName: 'robot' }));
  assert.equal(missing.status, 403);
  assert.equal(missing.body.message, 'pods "robot" is forbidden: error looking up service account adm-pods/robot: serviceaccount "robot" not found');
  const noClass = await json('POST', '/api/v1/namespaces/adm-pods/pods', podBody('nc', { priorityClassName: 'nope' }));
  assert.equal(noClass.status, 403);
  assert.equal(noClass.body.message, 'pods "nc" is forbidden: no PriorityClass with name nope was found');
});

test('LimitRanger: defaults and maximums', async () => {
  await namespace('adm-limits');
  const lr = kubectl(
    ['apply', '-n', 'adm-limits', '-f', '-'],
    'apiVersion: v1\nkind: LimitRange\nmetadata: {name: limits}\nspec:\n  limits:\n  - type: Container\n    default: {cpu: 500m}\n    defaultRequest: {cpu: 100m}\n    max: {cpu: "1"}\n',
  );
  assert.equal(lr.code, 0, lr.stderr);
  const ok = await json('POST', '/api/v1/namespaces/adm-limits/pods', podBody('web'));
  assert.equal(ok.status, 201, JSON.stringify(ok.body));
  assert.deepEqual(ok.body.spec.containers[0].resources, { limits: { cpu: '500m' }, requests: { cpu: '100m' } });
  assert.equal(ok.body.metadata.annotations['kubernetes.io/limit-ranger'], 'LimitRanger plugin set: cpu request for container app; cpu limit for container app');
  const big = await json('POST', '/api/v1/namespaces/adm-limits/pods', podBody('big', { containers: [{ name: 'app', image: 'nginx', resources: { limits: { cpu: '2' } } }] }));
  assert.equal(big.status, 403);
  assert.equal(big.body.message, 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
});

test('ResourceQuota: exceeded quota, status.used, dry runs charge nothing', async () => {
  await namespace('adm-quota');
  const q = kubectl(['create', 'quota', 'small', '-n', 'adm-quota', '--hard=pods=1']);
  assert.equal(q.code, 0, q.stderr);
  const dry = await json('POST', '/api/v1/namespaces/adm-quota/pods?dryRun=All', podBody('dry'));
  assert.equal(dry.status, 201, JSON.stringify(dry.body));
  let quota = (await json('GET', '/api/v1/namespaces/adm-quota/resourcequotas/small')).body;
  assert.equal(quota.status?.used?.pods ?? '0', '0');
  assert.equal((await json('POST', '/api/v1/namespaces/adm-quota/pods', podBody('one'))).status, 201);
  const two = await json('POST', '/api/v1/namespaces/adm-quota/pods', podBody('two'));
  assert.equal(two.status, 403);
  assert.equal(two.body.reason, 'Forbidden');
  assert.equal(two.body.message, 'pods "two" is forbidden: exceeded quota: small, requested: pods=1, used: pods=1, limited: pods=1');
  quota = (await json('GET', '/api/v1/namespaces/adm-quota/resourcequotas/small')).body;
  assert.deepEqual(quota.status, { hard: { pods: '1' }, used: { pods: '1' } });
  const r = kubectl(['run', 'three', '-n', 'adm-quota', '--image=nginx']);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, 'Error from server (Forbidden): pods "three" is forbidden: exceeded quota: small, requested: pods=1, used: pods=1, limited: pods=1\n');
});

test('PodSecurity: enforce refuses, warn warns (kubectl prints the warning)', async () => {
  await namespace('adm-restricted', { 'pod-security.kubernetes.io/enforce': 'restricted' });
  let r = kubectl(['run', 'nginx', '-n', 'adm-restricted', '--image=nginx']);
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    'Error from server (Forbidden): pods "nginx" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "nginx" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "nginx" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "nginx" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")\n',
  );
  await namespace('adm-warn', { 'pod-security.kubernetes.io/warn': 'baseline' });
  r = kubectl(['run', 'priv', '-n', 'adm-warn', '--image=nginx', '--overrides', '{"spec":{"schedulerName":"manual","containers":[{"name":"priv","image":"nginx","securityContext":{"privileged":true}}]}}']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, 'Warning: would violate PodSecurity "baseline:latest": privileged (container "priv" must not set securityContext.privileged=true)\n');
  assert.equal(r.stdout, 'pod/priv created\n');
});

async function webhookConfig(kind: 'Validating' | 'Mutating', name: string, hook: any): Promise<void> {
  const resource = kind === 'Validating' ? 'validatingwebhookconfigurations' : 'mutatingwebhookconfigurations';
  const r = await json('POST', `/apis/admissionregistration.k8s.io/v1/${resource}`, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name },
    webhooks: [
      {
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'adm-hooks' } },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        ...hook,
      },
    ],
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

async function deleteWebhookConfig(kind: 'Validating' | 'Mutating', name: string): Promise<void> {
  const resource = kind === 'Validating' ? 'validatingwebhookconfigurations' : 'mutatingwebhookconfigurations';
  await json('DELETE', `/apis/admissionregistration.k8s.io/v1/${resource}/${name}`);
}

test('webhooks: a mutating patch, a denial, warnings', async () => {
  await namespace('adm-hooks');
  await webhookConfig('Mutating', 'e2e-label', { name: 'label.e2e.example.com', clientConfig: { url: hooks.url('/label'), caBundle: hooks.caBundle } });
  await webhookConfig('Validating', 'e2e-deny', { name: 'deny.e2e.example.com', clientConfig: { url: hooks.url('/deny'), caBundle: hooks.caBundle } });
  try {
    const ok = await json('POST', '/api/v1/namespaces/adm-hooks/pods', podBody('ok', {}, { labels: { app: 'x' } }));
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.deepEqual(ok.body.metadata.labels, { app: 'x', 'admitted-by': 'webhook' });
    assert.deepEqual(ok.warnings, ['checked by the test webhook']);
    const r = await kubectlAsync(['run', 'bad', '-n', 'adm-hooks', '--image=nginx', '--labels=deny=true']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'Error from server (Forbidden): admission webhook "deny.e2e.example.com" denied the request: labelled deny\n');
    // the webhook saw the request as Kubernetes sends it
    const seen = hooks.received.get('/deny')!.at(-1)!.review.request;
    assert.equal(seen.operation, 'CREATE');
    assert.equal(seen.namespace, 'adm-hooks');
    assert.equal(seen.userInfo.username, 'kubernetes-admin');
    assert.equal(seen.object.metadata.labels['admitted-by'], 'webhook', 'validating webhooks see the mutated object');
  } finally {
    await deleteWebhookConfig('Mutating', 'e2e-label');
    await deleteWebhookConfig('Validating', 'e2e-deny');
  }
});

test('webhooks: a TokenRequest (kubectl create token) passes admission, after its own validation', async () => {
  await namespace('adm-hooks');
  hooks.handle('/token', (r) =>
    (r.request.object?.spec?.audiences ?? []).includes('forbidden')
      ? respond(r, { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'no tokens for that audience' } })
      : respond(r, { allowed: true }),
  );
  await webhookConfig('Validating', 'e2e-token', {
    name: 'token.e2e.example.com',
    clientConfig: { url: hooks.url('/token'), caBundle: hooks.caBundle },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['serviceaccounts/token'] }],
  });
  try {
    const ok = await kubectlAsync(['create', 'token', 'default', '-n', 'adm-hooks']);
    assert.equal(ok.code, 0, ok.stderr);
    const seen = hooks.received.get('/token')!.at(-1)!.review.request;
    assert.deepEqual(seen.kind, { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' });
    assert.deepEqual(seen.resource, { group: '', version: 'v1', resource: 'serviceaccounts' });
    assert.equal(seen.subResource, 'token');
    assert.equal(seen.name, 'default');
    assert.equal(seen.object.spec.expirationSeconds, 3600, 'the webhook sees the defaulted request');
    const denied = await kubectlAsync(['create', 'token', 'default', '-n', 'adm-hooks', '--audience=forbidden']);
    assert.equal(denied.code, 1);
    assert.equal(denied.stderr, 'error: failed to create token: admission webhook "token.e2e.example.com" denied the request: no tokens for that audience\n');
    // static validation comes first: the webhook never sees a request that fails it
    const before = hooks.received.get('/token')!.length;
    const short = await kubectlAsync(['create', 'token', 'default', '-n', 'adm-hooks', '--duration=1m']);
    assert.equal(short.code, 1);
    assert.match(short.stderr, /may not specify a duration less than 10 minutes/);
    assert.equal(hooks.received.get('/token')!.length, before);
  } finally {
    await deleteWebhookConfig('Validating', 'e2e-token');
  }
});

test('webhooks: timeouts under failurePolicy Fail and Ignore', async () => {
  await namespace('adm-hooks');
  await webhookConfig('Validating', 'e2e-slow', { name: 'slow.e2e.example.com', timeoutSeconds: 1, failurePolicy: 'Fail', clientConfig: { url: hooks.url('/slow'), caBundle: hooks.caBundle } });
  try {
    const r = await json('POST', '/api/v1/namespaces/adm-hooks/pods', podBody('slow'));
    assert.equal(r.status, 500);
    assert.equal(r.body.message, `Internal error occurred: failed calling webhook "slow.e2e.example.com": failed to call webhook: Post "https://127.0.0.1:${hooks.port}/slow?timeout=1s": context deadline exceeded`);
  } finally {
    await deleteWebhookConfig('Validating', 'e2e-slow');
  }
  await webhookConfig('Validating', 'e2e-slow-ignore', { name: 'slow.e2e.example.com', timeoutSeconds: 1, failurePolicy: 'Ignore', clientConfig: { url: hooks.url('/slow'), caBundle: hooks.caBundle } });
  try {
    const r = await json('POST', '/api/v1/namespaces/adm-hooks/pods', podBody('slow-ignored'));
    assert.equal(r.status, 201, JSON.stringify(r.body));
  } finally {
    await deleteWebhookConfig('Validating', 'e2e-slow-ignore');
  }
});

test('webhooks: dry runs reach webhooks without side effects (dryRun: true); one with side effects fails the request', async () => {
  await namespace('adm-hooks');
  await webhookConfig('Validating', 'e2e-dry', { name: 'dry.e2e.example.com', sideEffects: 'NoneOnDryRun', clientConfig: { url: hooks.url('/deny'), caBundle: hooks.caBundle } });
  try {
    const r = await kubectlAsync(['run', 'dry', '-n', 'adm-hooks', '--image=nginx', '--dry-run=server']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(hooks.received.get('/deny')!.at(-1)!.review.request.dryRun, true);
  } finally {
    await deleteWebhookConfig('Validating', 'e2e-dry');
  }
  // Kubernetes' v1 validation refuses sideEffects other than None and NoneOnDryRun on create;
  // where the server accepts one (objects kept from v1beta1 days), a dry run must not reach it.
  const created = await json('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'e2e-effects' },
    webhooks: [
      {
        name: 'effects.e2e.example.com',
        admissionReviewVersions: ['v1'],
        sideEffects: 'Some',
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'adm-hooks' } },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        clientConfig: { url: hooks.url('/deny'), caBundle: hooks.caBundle },
      },
    ],
  });
  if (created.status === 422) {
    assert.match(created.body.message, /webhooks\[0\]\.sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"/);
    return;
  }
  assert.equal(created.status, 201, JSON.stringify(created.body));
  try {
    const before = hooks.received.get('/deny')?.length ?? 0;
    const r = await kubectlAsync(['run', 'dry', '-n', 'adm-hooks', '--image=nginx', '--dry-run=server']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'Error from server (BadRequest): admission webhook "effects.e2e.example.com" does not support dry run\n');
    assert.equal(hooks.received.get('/deny')?.length ?? 0, before, 'the webhook was not called');
  } finally {
    await deleteWebhookConfig('Validating', 'e2e-effects');
  }
});

test("webhooks: the time spent in them counts in apiserver_request_duration_seconds, not in apiserver_request_sli_duration_seconds", async () => {
  hooks.handle('/wait', async (r) => {
    await new Promise((x) => setTimeout(x, 400));
    return respond(r, { allowed: true });
  });
  await namespace('adm-sli');
  // Secrets: no controller writes them, so the POST series holds this request alone
  const selector = { matchLabels: { 'kubernetes.io/metadata.name': 'adm-sli' } };
  const rules = [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'] }];
  await webhookConfig('Mutating', 'e2e-wait-m', { name: 'wait-m.e2e.example.com', namespaceSelector: selector, rules, clientConfig: { url: hooks.url('/wait'), caBundle: hooks.caBundle } });
  await webhookConfig('Validating', 'e2e-wait-v', { name: 'wait-v.e2e.example.com', namespaceSelector: selector, rules, clientConfig: { url: hooks.url('/wait'), caBundle: hooks.caBundle } });
  try {
    const posting = json('POST', '/api/v1/namespaces/adm-sli/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' } });
    // while it waits on its webhooks the write holds a mutating slot: the gauge's next report (each
    // second, the highest use since the last) shows it, and keeps it for a second
    let inflight = 0;
    for (const end = Date.now() + 3000; Date.now() < end && inflight < 1; await new Promise((x) => setTimeout(x, 50))) {
      const m = /^apiserver_current_inflight_requests\{request_kind="mutating"\} (\d+)$/m.exec((await c.raw('GET', '/metrics')).text);
      inflight = Number(m?.[1] ?? 0);
    }
    assert.ok(inflight >= 1, 'apiserver_current_inflight_requests counted the write in flight');
    const r = await posting;
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const text = (await c.raw('GET', '/metrics')).text;
    const labels = 'group="",version="v1",resource="secrets",subresource="",scope="resource",component="apiserver"';
    const value = (line: string) => Number(text.split('\n').find((l) => l.startsWith(line + ' '))?.slice(line.length + 1));
    assert.equal(value(`apiserver_request_duration_seconds_count{verb="POST",dry_run="",${labels}}`), 1);
    assert.equal(value(`apiserver_request_duration_seconds_bucket{verb="POST",dry_run="",${labels},le="0.6"}`), 0, 'two webhooks of 400 ms each, one after the other');
    assert.equal(value(`apiserver_request_sli_duration_seconds_count{verb="POST",${labels}}`), 1);
    assert.equal(value(`apiserver_request_sli_duration_seconds_bucket{verb="POST",${labels},le="0.2"}`), 1, 'the same request without its webhooks');
  } finally {
    await deleteWebhookConfig('Mutating', 'e2e-wait-m');
    await deleteWebhookConfig('Validating', 'e2e-wait-v');
  }
});

test('--disable-admission-plugins and --enable-admission-plugins', async () => {
  const other = await startCluster({ args: ['--disable-admission-plugins=ServiceAccount,DefaultTolerationSeconds', '--enable-admission-plugins=AlwaysPullImages'] });
  try {
    const r = await other.raw('POST', '/api/v1/namespaces/default/pods', { body: podBody('web', { containers: [{ name: 'app', image: 'nginx', imagePullPolicy: 'IfNotPresent' }] }) });
    assert.equal(r.status, 201, r.text);
    const spec = r.json().spec;
    assert.equal(spec.serviceAccountName, undefined);
    assert.equal(spec.volumes, undefined);
    assert.equal(spec.tolerations, undefined);
    assert.equal(spec.containers[0].imagePullPolicy, 'Always');
  } finally {
    await other.stop();
  }
});

test('an unknown plugin stops the server with kube-apiserver\'s message; --help lists the plugins', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'keelson-adm-'));
  try {
    const port = await freePort();
    const proc = spawn(process.execPath, [KEELSON, 'server', '--data-dir', dataDir, '--secure-port', String(port), '--bind-address', '127.0.0.1', '--enable-admission-plugins=NoSuchPlugin'], { cwd: ROOT });
    let out = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((resolve) => {
      const t = setTimeout(() => proc.kill('SIGKILL'), 20_000);
      proc.on('exit', (c) => {
        clearTimeout(t);
        resolve(c);
      });
    });
    assert.notEqual(code, 0);
    assert.match(out, /enable-admission-plugins plugin "NoSuchPlugin" is unknown/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const help = spawn(process.execPath, [KEELSON, 'server', '--help'], { cwd: ROOT });
  let text = '';
  help.stdout.on('data', (d) => (text += d));
  await new Promise((r) => help.on('exit', r));
  assert.match(text, /--enable-admission-plugins strings\s+admission plugins that should be enabled in addition to default enabled ones \(NamespaceLifecycle, LimitRanger, ServiceAccount, /);
  assert.match(text, /--disable-admission-plugins strings\s+admission plugins that should be disabled although they are in the default enabled plugins list/);
  assert.match(text, /--default-not-ready-toleration-seconds int\s+Indicates the tolerationSeconds of the toleration for notReady:NoExecute/);
});
